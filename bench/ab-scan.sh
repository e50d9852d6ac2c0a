#!/usr/bin/env bash
# Alternates full scans of one table between running gateways (two builds, two data formats) and
# prints each one's average time: the way to compare builds on a VM whose speed moves by up to 25%
# between minutes (bench/README.md, "By hand: two builds side by side").
#
#   bench/ab-scan.sh [-r rounds] [-p path] http://127.0.0.1:18811 http://127.0.0.1:18821 ...
#
# Each round scans every gateway twice, in one order and then the reverse; the first two scans of
# each gateway warm it and are not counted. Bounded: rounds x gateways x 4 scans (default 5 rounds).
set -euo pipefail
rounds=5
path='/v1/instances/bench/tables/t/rows?limit=-1'
while getopts 'r:p:' opt; do
  case "$opt" in
    r) rounds="$OPTARG" ;;
    p) path="$OPTARG" ;;
    *) exit 2 ;;
  esac
done
shift $((OPTIND - 1))
if [ "$#" -lt 2 ]; then
  echo "usage: bench/ab-scan.sh [-r rounds] [-p path] URL URL [URL...]" >&2
  exit 2
fi
for url in "$@"; do
  case "$url" in
    http://127.0.0.1:*) ;;
    *) echo "ab-scan: $url is not a loopback URL (http://127.0.0.1:PORT)" >&2; exit 2 ;;
  esac
done

scan() { curl -sf -o /dev/null -w '%{time_total}' --max-time 120 "$1$path"; }

for url in "$@"; do scan "$url" >/dev/null; scan "$url" >/dev/null; done
reversed=()
for url in "$@"; do reversed=("$url" "${reversed[@]}"); done
for _ in $(seq "$rounds"); do
  for url in "$@" "${reversed[@]}"; do
    echo "$url $(scan "$url") $(scan "$url")"
  done
done | awk '{ for (i = 2; i <= NF; i++) { sum[$1] += $i; n[$1]++; if (!($1 in lo) || $i < lo[$1]) lo[$1] = $i; if ($i > hi[$1]) hi[$1] = $i } }
  END { for (u in sum) printf "%s  average %.4f s  (%.4f-%.4f, %d scans)\n", u, sum[u] / n[u], lo[u], hi[u], n[u] }'
