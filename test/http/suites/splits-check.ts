/**
 * What every store's split points must satisfy, checked over HTTP: the ranges of GET .../splits
 * are contiguous, start and end open, and scanning each one (limit=-1) and joining the bodies in
 * order gives exactly the bytes of one full scan: no row missing, none twice.
 */
import type { Test } from 'tap';
import { raw } from '../harness.js';

export interface SplitRange {
  readonly start: string | null;
  readonly end: string | null;
  readonly estimated_rows: number | null;
  readonly estimated_bytes: number;
}

export async function splitsOf(base: string, tablePath: string, n: number, headers: Record<string, string> = {}): Promise<SplitRange[]> {
  const res = await raw(base, 'GET', `${tablePath}/splits?n=${n}`, undefined, headers);
  if (res.status !== 200) throw new Error(`splits?n=${n}: ${res.status} ${res.body}`);
  return (JSON.parse(res.body) as { splits: SplitRange[] }).splits;
}

/** The scan of one range, as a client fetches it: `start`/`end` are given to start_eid/end_eid as they are. */
export function rangePath(tablePath: string, range: SplitRange, extra = 'limit=-1'): string {
  const q = [extra];
  if (range.start !== null) q.push(`start_eid=${encodeURIComponent(range.start)}`);
  if (range.end !== null) q.push(`end_eid=${encodeURIComponent(range.end)}`);
  return `${tablePath}/rows?${q.join('&')}`;
}

/** Checks the ranges for n = each of `ns`; returns the ranges of the last. */
export async function checkSplitsCover(t: Test, base: string, tablePath: string, ns: readonly number[], what: string): Promise<SplitRange[]> {
  const full = await raw(base, 'GET', `${tablePath}/rows?limit=-1`);
  t.equal(full.status, 200);
  let last: SplitRange[] = [];
  for (const n of ns) {
    const ranges = await splitsOf(base, tablePath, n);
    t.ok(ranges.length >= 1 && ranges.length <= n, `${what} n=${n}: 1 to ${n} ranges (${ranges.length})`);
    t.equal(ranges[0]!.start, null, `${what} n=${n}: the first range starts open`);
    t.equal(ranges[ranges.length - 1]!.end, null, `${what} n=${n}: the last range ends open`);
    for (let i = 1; i < ranges.length; i++) {
      t.equal(ranges[i]!.start, ranges[i - 1]!.end, `${what} n=${n}: range ${i} starts where range ${i - 1} ends`);
      const previous = ranges[i - 1]!.start;
      t.ok(ranges[i]!.start !== null && (previous === null || ranges[i]!.start! > previous), `${what} n=${n}: bounds ascend`);
    }
    let joined = '';
    for (const range of ranges) {
      const part = await raw(base, 'GET', rangePath(tablePath, range));
      t.equal(part.status, 200);
      joined += part.body;
    }
    t.ok(joined === full.body, `${what} n=${n}: the ranges' rows joined in order are the full scan, byte for byte`);
    last = ranges;
  }
  return last;
}
