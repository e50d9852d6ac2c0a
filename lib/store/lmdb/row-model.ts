/**
 * One row's cells in memory, as the embedded store keeps a compact row (compact-row.ts): columns in
 * stored order (family, then qualifier, by UTF-8 bytes: the order cell keys sort in), each with
 * its versions newest first and at most one version per timestamp. Writes, counter increments,
 * version and TTL trims and deletes of a compact row are applied here, then the row is encoded
 * again in the same write transaction.
 */
import { laterOf } from '../../model/cells/timestamp.js';
import { FOREVER, type CellOut, type EncodedCell, type FamilyLayout, type Timestamp } from '../../model/types.js';
import type { RowDelete } from '../store.js';
import { expiryOf } from '../cell-picker.js';
import { incrementedCounter } from '../counter-rules.js';
import { COUNTER_SCHEMA_ID } from '../cell-value.js';

export interface StoredVersion {
  readonly timestamp: Timestamp;
  /** Schema-table id of the writer schema (COUNTER_SCHEMA_ID for counters). */
  readonly schemaId: number;
  readonly counter: boolean;
  /** The value as wire JSON text (a counter as its decimal integer). */
  readonly json: string;
}

export interface StoredColumn {
  readonly family: string;
  readonly qualifier: string;
  /** Newest first, distinct timestamps, never empty in a model. */
  versions: StoredVersion[];
}

/**
 * Orders strings by their UTF-8 bytes (code point order): UTF-16 units agree with it except that
 * surrogates (D800-DFFF, code points above FFFF) must sort after E000-FFFF.
 */
export function compareUtf8(a: string, b: string): number {
  const n = Math.min(a.length, b.length);
  for (let i = 0; i < n; i++) {
    const x = a.charCodeAt(i);
    const y = b.charCodeAt(i);
    if (x !== y) return utf8Rank(x) - utf8Rank(y);
  }
  return a.length - b.length;
}

function utf8Rank(unit: number): number {
  if (unit < 0xd800) return unit;
  return unit >= 0xe000 ? unit - 0x800 : unit + 0x2000;
}

/** Stored order of columns: family, then qualifier (family names are ASCII: string order is byte order). */
export function compareColumns(af: string, aq: string, bf: string, bq: string): number {
  if (af !== bf) return af < bf ? -1 : 1;
  return compareUtf8(aq, bq);
}

export class RowModel {
  constructor(readonly columns: StoredColumn[] = []) {}

  get isEmpty(): boolean {
    return this.columns.length === 0;
  }

  /** Cells (all versions) in the row. */
  get cellCount(): number {
    let n = 0;
    for (const c of this.columns) n += c.versions.length;
    return n;
  }

  /** Index of the column, or -(insertion point + 1) when absent (binary search). */
  private indexOf(family: string, qualifier: string): number {
    let lo = 0;
    let hi = this.columns.length - 1;
    while (lo <= hi) {
      const mid = (lo + hi) >> 1;
      const c = this.columns[mid]!;
      const cmp = compareColumns(c.family, c.qualifier, family, qualifier);
      if (cmp === 0) return mid;
      if (cmp < 0) lo = mid + 1;
      else hi = mid - 1;
    }
    return -(lo + 1);
  }

  column(family: string, qualifier: string): StoredColumn | undefined {
    const i = this.indexOf(family, qualifier);
    return i >= 0 ? this.columns[i] : undefined;
  }

  /** Puts a version; one already at the same timestamp is replaced (as a cell key is). */
  put(family: string, qualifier: string, version: StoredVersion): void {
    let i = this.indexOf(family, qualifier);
    if (i < 0) {
      i = -i - 1;
      this.columns.splice(i, 0, { family, qualifier, versions: [version] });
      return;
    }
    const versions = this.columns[i]!.versions;
    let v = 0;
    while (v < versions.length && versions[v]!.timestamp > version.timestamp) v++;
    if (v < versions.length && versions[v]!.timestamp === version.timestamp) versions[v] = version;
    else versions.splice(v, 0, version);
  }

  /**
   * Adds `delta` to the newest counter version of the column. A newest version that has outlived
   * the family's TTL is one no read returns: the counter is absent and restarts from `delta`. A
   * counter set in the future stays the newest version and is updated in place.
   */
  increment(family: FamilyLayout, qualifier: string, delta: bigint, now: number): void {
    const newest = this.column(family.name, qualifier)?.versions[0];
    let current = 0n;
    let timestamp: Timestamp = now;
    if (newest !== undefined && newest.timestamp >= expiryOf(family.ttlSeconds, now)) {
      current = newest.counter ? BigInt(newest.json) : 0n;
      timestamp = laterOf(now, newest.timestamp);
    }
    const next = incrementedCounter(current, delta, family.name, qualifier);
    this.put(family.name, qualifier, { timestamp, schemaId: COUNTER_SCHEMA_ID, counter: true, json: next.toString() });
  }

  /** Applies written cells (already validated); cells without a timestamp get `now`. */
  apply(cells: readonly EncodedCell[], families: ReadonlyMap<string, FamilyLayout>, now: number): void {
    for (const cell of cells) {
      if (cell.kind === 'value') {
        this.put(cell.family, cell.qualifier, { timestamp: cell.timestamp ?? now, schemaId: cell.schemaId, counter: false, json: cell.json });
      } else if (cell.kind === 'counter-set') {
        this.put(cell.family, cell.qualifier, { timestamp: cell.timestamp ?? now, schemaId: COUNTER_SCHEMA_ID, counter: true, json: cell.value.toString() });
      } else {
        this.increment(families.get(cell.family)!, cell.qualifier, cell.delta, now);
      }
    }
  }

  /** Merges every version of `other` into this row (each replaces one at the same timestamp). */
  merge(other: RowModel): void {
    for (const c of other.columns) for (const v of c.versions) this.put(c.family, c.qualifier, v);
  }

  /**
   * Drops the versions no read returns any more: beyond the family's max_versions, and older than
   * `now` minus its ttl_seconds (what the per-cell store's trim drops, test/store/lmdb-trim.test.ts).
   */
  trim(families: ReadonlyMap<string, FamilyLayout>, now: number): void {
    let kept = 0;
    for (const c of this.columns) {
      const family = families.get(c.family);
      if (family !== undefined) {
        const expiredBefore = expiryOf(family.ttlSeconds, now);
        let versions = c.versions;
        if (family.maxVersions < FOREVER && versions.length > family.maxVersions) versions = versions.slice(0, family.maxVersions);
        if (expiredBefore > -Infinity && versions[versions.length - 1]!.timestamp < expiredBefore)
          versions = versions.filter((v) => v.timestamp >= expiredBefore);
        c.versions = versions;
      }
      if (c.versions.length > 0) this.columns[kept++] = c;
    }
    this.columns.length = kept;
  }

  /** Applies one delete that names this row: the row, a family or a column; every version or those at or before a timestamp. */
  delete(d: RowDelete): void {
    let kept = 0;
    for (const c of this.columns) {
      const hit = (d.family === undefined || d.family === c.family) && (d.qualifier === undefined || d.qualifier === c.qualifier);
      if (hit) c.versions = d.upToTimestamp === undefined ? [] : c.versions.filter((v) => v.timestamp > d.upToTimestamp!);
      if (c.versions.length > 0) this.columns[kept++] = c;
    }
    this.columns.length = kept;
  }

  /** Every version as a cell, in stored order (the order a cell-key cursor yields). */
  *cells(): Generator<CellOut> {
    for (const c of this.columns) {
      for (const v of c.versions) yield { family: c.family, qualifier: c.qualifier, timestamp: v.timestamp, schemaId: v.schemaId, json: v.json };
    }
  }
}
