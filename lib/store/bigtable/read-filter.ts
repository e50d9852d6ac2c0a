/**
 * Builds the Bigtable RowFilter (raw proto form) of a read, so Bigtable returns only the cells
 * the CellPicker would keep: per selected family a chain of
 *
 *   family (or one column)  ->  cellsPerColumnLimit(max_versions)  ->  timestamp range
 *   (the read's [min, max) narrowed by the group's TTL)  ->  cellsPerColumnLimit(versions)
 *
 * in that order, so versions beyond max_versions are never read (even when GC has not run yet)
 * and `versions` counts within the time range, as on the embedded store. Timestamps are in
 * microseconds (ms x 1000). The raw proto is used because the client's `time` filter silently
 * drops numeric bounds (platform-notes.md 2).
 */
import { END_OF_TIME } from '../../model/read-request.js';
import { FOREVER, type FamilyLayout, type ReadSpec, type TableLayout } from '../../model/types.js';

export type ProtoFilter = Record<string, unknown>;

const INT64_MAX = 2n ** 63n - 1n;

/** Microseconds of a millisecond timestamp, as the int64 decimal string the proto takes. */
export function micros(ms: number): string {
  return (BigInt(ms) * 1000n).toString();
}

export function buildReadFilter(layout: TableLayout, read: ReadSpec, now: number = Date.now()): ProtoFilter {
  const selected = new Map<string, Set<string> | undefined>();
  if (read.columns === undefined) {
    for (const name of layout.families.keys()) selected.set(name, undefined);
  } else {
    for (const c of read.columns) {
      if (!layout.families.has(c.family)) continue;
      if (c.qualifier === undefined) selected.set(c.family, undefined);
      else if (!selected.has(c.family)) selected.set(c.family, new Set([c.qualifier]));
      else selected.get(c.family)?.add(c.qualifier);
    }
  }
  const branches: ProtoFilter[] = [];
  for (const [name, qualifiers] of selected) {
    const family = layout.families.get(name)!;
    if (qualifiers === undefined) {
      branches.push(chain([{ familyNameRegexFilter: escapeRegex(name) }, ...versionsAndTime(family, read, now)]));
    } else {
      const columns = [...qualifiers].map((q) => ({ columnRangeFilter: { familyName: name, startQualifierClosed: Buffer.from(q, 'utf8'), endQualifierClosed: Buffer.from(q, 'utf8') } }));
      branches.push(chain([columns.length === 1 ? columns[0]! : { interleave: { filters: columns } }, ...versionsAndTime(family, read, now)]));
    }
  }
  if (branches.length === 0) return { blockAllFilter: true };
  return branches.length === 1 ? branches[0]! : { interleave: { filters: branches } };
}

function versionsAndTime(family: FamilyLayout, read: ReadSpec, now: number): ProtoFilter[] {
  const out: ProtoFilter[] = [];
  const maxVersions = family.maxVersions;
  if (maxVersions < FOREVER) out.push({ cellsPerColumnLimitFilter: maxVersions });
  let start = read.minTimestamp;
  if (family.ttlSeconds < FOREVER) start = Math.max(start, now - family.ttlSeconds * 1000);
  const range: Record<string, string> = {};
  if (start > 0) range.startTimestampMicros = micros(start);
  if (read.maxTimestamp !== END_OF_TIME && BigInt(read.maxTimestamp) * 1000n <= INT64_MAX) range.endTimestampMicros = micros(read.maxTimestamp);
  if (Object.keys(range).length > 0) out.push({ timestampRangeFilter: range });
  const versions = Math.min(read.maxVersions, maxVersions);
  // After limit(max_versions) at most max_versions cells remain, so only a smaller `versions` needs its own limit.
  if (versions < maxVersions) out.push({ cellsPerColumnLimitFilter: versions });
  return out;
}

function chain(filters: ProtoFilter[]): ProtoFilter {
  return filters.length === 1 ? filters[0]! : { chain: { filters } };
}

/** RE2 full-match pattern for a literal family name (Kiji names are [A-Za-z0-9_], escaped anyway). */
function escapeRegex(text: string): string {
  return text.replace(/[^A-Za-z0-9_]/g, (c) => `\\${c}`);
}
