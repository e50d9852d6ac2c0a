/**
 * The filter stage's decision per stored column, worked out once per scan: the code that walks
 * compact rows as bytes (compact-render.ts for the row document, NewestCells below for the Arrow
 * batches and Avro blocks) finds a column record's family and qualifier among the columns met
 * before by comparing bytes, so a name is decoded, and its CellPicker plan and the consumer's own
 * data made, once a column, not once a cell. A table's rows mostly repeat one column order: the
 * column that followed the last one found is tried first (one comparison instead of a search).
 *
 * newestSuffices() says when a compact row's newest versions are the whole answer, so a walk of
 * the newest column records alone gives what the CellPicker would. CompactRenderer walks them in
 * stored order into the row document (with its row shapes); NewestCells gives them by the
 * consumer's column numbering, for the encoders that fill columns (arrow-chunk.ts, avro-chunk.ts).
 * Both read a row of the shape they last read whole through row-shape.ts's RowShape.
 * test/store/compact-row.test.ts checks both against a CellPicker on random rows and reads.
 */
import { END_OF_TIME } from '../../model/read/read-request.js';
import type { ReadSpec, TableLayout, Timestamp } from '../../model/types.js';
import { CellPicker, type FamilyPlan } from '../cell-picker.js';
import { COLUMN_HEAD_BYTES, COUNTER_BIT, FORMAT_VERSION, HEADER_BYTES, readTimestamp, readU16, readU32 } from './compact-row.js';
import { sameBytes } from './name-cache.js';
import { RowShape, ShapeBudget } from './row-shape.js';

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

/** A consumer's slot of a column: its index among the consumer's columns, or one of these. */
export const NOT_RETURNED = -1;
/** A column NewestCells cannot give by slot (a map family's qualifier): the row takes the general path. */
export const NEEDS_ROW = -2;

/**
 * The cells a read returns of a compact row whose newest versions are the whole answer
 * (newestSuffices), by the consumer's numbering of its columns (`slotOf`, asked once a column):
 * slot `c` holds the value's JSON text `v[starts[c], ends[c])` at `stamps[c]` with writer schema
 * `schemaIds[c]`, or nothing where `starts[c]` is -1. The filter stage's rule (CellPicker), decided
 * once a column.
 */
export class NewestCells {
  readonly starts: Int32Array;
  readonly ends: Int32Array;
  readonly stamps: Float64Array;
  readonly schemaIds: Int32Array;
  readonly rangeEnd: Timestamp;
  private readonly minTs: Timestamp;
  private readonly index: StoredColumnIndex<number>;
  /** The last row read whole's shape and its columns' slots: a row of the same shape is read without a lookup a column. */
  private shaped: SlotShape | undefined;
  private readonly budget = new ShapeBudget();
  /**
   * Whether every slot the shape does not write holds -1: rows read through one shape write the
   * same slots (a row that fails to fit writes some of them too), so only a row read by walk()
   * leaves others written, and the slots are cleared once after it, not before every row.
   */
  private slotsClean = false;

  /** `slotOf`: a returned column's slot, NOT_RETURNED to leave it out, or NEEDS_ROW. */
  constructor(
    layout: TableLayout,
    readonly read: ReadSpec,
    slots: number,
    slotOf: (family: string, qualifier: string) => number,
    now: number,
  ) {
    this.starts = new Int32Array(slots);
    this.ends = new Int32Array(slots);
    this.stamps = new Float64Array(slots);
    this.schemaIds = new Int32Array(slots);
    this.rangeEnd = rangeEndOf(read);
    this.minTs = read.minTimestamp;
    this.index = new StoredColumnIndex(new CellPicker(layout, read, now), (family, qualifier, kept) => (kept ? slotOf(family, qualifier) : NOT_RETURNED));
  }

  /** Whether the compact row in `v` can be read here: its newest versions are its whole answer. */
  suits(v: Buffer): boolean {
    return newestSuffices(v, this.read, this.rangeEnd);
  }

  /** Rows of() read through a shape rather than by looking their columns up (a test checks both ways are taken). */
  get rowsByShape(): number {
    return this.budget.rowsByShape;
  }

  /**
   * Reads the compact row in `v` (one that suits) into the slots; the number of cells the read
   * returns of it, or -1 when the row takes the general path (a NEEDS_ROW column, a timestamp
   * past 2^53).
   */
  of(v: Buffer): number {
    const shaped = this.shaped;
    if (shaped !== undefined && readU16(v, 2) === shaped.shape.n) {
      if (!this.slotsClean) {
        this.starts.fill(-1);
        this.slotsClean = true;
      }
      if (shaped.shape.fits(v, this.rangeEnd)) {
        this.budget.used();
        return shaped.cells;
      }
    }
    return this.walk(v);
  }

  /**
   * of() by looking each column up (StoredColumnIndex); learns the row's shape when every column
   * was decided by its names alone (none NEEDS_ROW).
   */
  private walk(v: Buffer): number {
    const { starts, ends, stamps, schemaIds, index, minTs, rangeEnd } = this;
    starts.fill(-1);
    this.slotsClean = false;
    const n = readU16(v, 2);
    let slots = this.budget.learning ? new Int32Array(n) : undefined;
    // A time range starting past 2^53 (a bigint) keeps no row of safe timestamps: Infinity.
    let keepFrom = typeof minTs === 'number' ? minTs : Infinity;
    let cells = 0;
    let p = HEADER_BYTES;
    let family: StoredFamily<number> | undefined;
    for (let i = 0; i < n; i++) {
      const famBytes = readU16(v, p);
      const names = p + COLUMN_HEAD_BYTES;
      if (famBytes > 0) family = index.familyOf(v, names, names + famBytes);
      const qualStart = names + famBytes;
      const valueStart = qualStart + readU16(v, p + 2);
      const head = p;
      p = valueStart + readU32(v, p + 16);
      if (slots !== undefined) slots[i] = NOT_RETURNED;
      const plan = family!.plan;
      if (plan === null) continue;
      const slot = index.columnOf(family!, v, qualStart, valueStart).data;
      if (slot === NOT_RETURNED) continue;
      // A row with a NEEDS_ROW column is no shape: a shape gives slots only.
      if (slot === NEEDS_ROW) slots = undefined;
      else if (slots !== undefined) {
        slots[i] = slot;
        keepFrom = Math.max(keepFrom, plan.expiredBefore);
      }
      const timestamp = readTimestamp(v, head + 8);
      if (timestamp < plan.expiredBefore || timestamp < minTs || timestamp >= rangeEnd) continue;
      if (slot === NEEDS_ROW || typeof timestamp === 'bigint') return -1;
      starts[slot] = valueStart;
      ends[slot] = p;
      stamps[slot] = timestamp;
      schemaIds[slot] = readU32(v, head + 4) & ~COUNTER_BIT;
      cells++;
    }
    if (slots !== undefined && n > 0) this.learn(v, slots, keepFrom);
    return cells;
  }

  /** Keeps the shape of the row in `v` whose columns' slots walk() found: a table's next rows mostly share it. */
  private learn(v: Buffer, slots: Int32Array, keepFrom: number): void {
    this.budget.learnt();
    this.shaped = { shape: new RowShape(v, slots, keepFrom, this), cells: slots.reduce((n, slot) => (slot >= 0 ? n + 1 : n), 0) };
  }
}

/** A shape of stored rows (row-shape.ts) whose fits() writes the returned columns into NewestCells' slots. */
interface SlotShape {
  readonly shape: RowShape;
  /** The returned columns: the cells of a row that fits. */
  readonly cells: number;
}
