/**
 * The filter stage's decision per stored column, worked out once per scan: the renderers that walk
 * compact rows as bytes (compact-render.ts for the row document, arrow-chunk.ts for Arrow
 * batches) find a column record's family and qualifier among the columns met before by comparing
 * bytes, so a name is decoded, and its CellPicker plan and the consumer's own data made, once a
 * column, not once a cell. A table's rows mostly repeat one column order: the column that followed
 * the last one found is tried first (one comparison instead of a search).
 *
 * newestSuffices() says when a compact row's newest versions are the whole answer, so a walk of
 * the newest column records alone gives what the CellPicker would.
 */
import { END_OF_TIME } from '../../model/read/read-request.js';
import type { ReadSpec, Timestamp } from '../../model/types.js';
import { CellPicker, type FamilyPlan } from '../cell-picker.js';
import { FORMAT_VERSION, readU32 } from './compact-row.js';
import { sameBytes } from './name-cache.js';

/** Columns remembered per family and scan; a map family with more distinct qualifiers decodes the rest. */
const COLUMN_CACHE = 256;

export interface StoredFamily<T> {
  readonly name: Buffer;
  readonly family: string;
  /** What the read returns of the family (the CellPicker's plan); null: nothing. */
  readonly plan: FamilyPlan | null;
  readonly columns: StoredColumn<T>[];
}

export interface StoredColumn<T> {
  readonly family: StoredFamily<T>;
  readonly qualifier: Buffer;
  /** The read returns this column (its family selected, the qualifier selected and declared). */
  readonly kept: boolean;
  /** What the consumer keeps for the column (made once, by the index's `make`). */
  readonly data: T;
  /** The column that came after this one last time. */
  follower?: StoredColumn<T>;
}

export class StoredColumnIndex<T> {
  private readonly families: StoredFamily<T>[] = [];
  private last: StoredColumn<T> | undefined;

  /** `make`: the consumer's data for a column met for the first time (`kept`: the read returns it). */
  constructor(
    private readonly picker: CellPicker,
    private readonly make: (family: string, qualifier: string, kept: boolean) => T,
  ) {}

  /** The family named by `v[start, end)`. */
  familyOf(v: Buffer, start: number, end: number): StoredFamily<T> {
    for (const f of this.families) if (sameBytes(f.name, v, start, end)) return f;
    const name = v.toString('utf8', start, end);
    const entry: StoredFamily<T> = { name: Buffer.from(v.subarray(start, end)), family: name, plan: this.picker.planOf(name), columns: [] };
    this.families.push(entry);
    return entry;
  }

  /** The column of `family` whose qualifier is `v[start, end)` (the family's plan is not null). */
  columnOf(family: StoredFamily<T>, v: Buffer, start: number, end: number): StoredColumn<T> {
    const last = this.last;
    const predicted = last?.follower;
    let found: StoredColumn<T> | undefined;
    if (predicted !== undefined && predicted.family === family && sameBytes(predicted.qualifier, v, start, end)) found = predicted;
    else {
      for (const c of family.columns) {
        if (sameBytes(c.qualifier, v, start, end)) {
          found = c;
          break;
        }
      }
    }
    if (found === undefined) {
      const qualifier = v.toString('utf8', start, end);
      const kept = CellPicker.selects(family.plan!, qualifier);
      found = { family, qualifier: Buffer.from(v.subarray(start, end)), kept, data: this.make(family.family, qualifier, kept) };
      if (family.columns.length < COLUMN_CACHE) family.columns.push(found);
    }
    if (last !== undefined) last.follower = found;
    this.last = found;
    return found;
  }
}

/** A read's time range end as a number to compare with: Infinity when unbounded (END_OF_TIME reads the largest timestamp too). */
export function rangeEndOf(read: ReadSpec): Timestamp {
  return read.maxTimestamp === END_OF_TIME ? Infinity : read.maxTimestamp;
}

/**
 * Whether the answer of the compact row in `v` is at most the newest version of each column: no
 * older versions stored, or one version asked and no newest version at or past the time range's
 * end (an older version is then never returned: a newest version before the range's start or
 * past its TTL has older ones that are too). Rows still in format 1 never are.
 */
export function newestSuffices(v: Buffer, read: ReadSpec, rangeEnd: Timestamp): boolean {
  const history = v[1] === FORMAT_VERSION ? readU32(v, 4) : -1;
  return history === 0 || (history > 0 && read.maxVersions === 1 && v.readDoubleLE(16) < rangeEnd);
}
