/**
 * Every change to a row of the embedded store, applied inside the caller's write transaction.
 * A row is stored one of three ways (compact-row.ts):
 *
 *  - compact: one entry under the row prefix; a write decodes it, applies the cells, trims it and
 *    encodes it again (RowModel);
 *  - spilled (compact encoding over MAX_COMPACT_ROW_BYTES): a marker entry under the row prefix and
 *    one entry per cell; a write puts cell entries and trims them, never rewriting a large value;
 *  - legacy (written before compact rows; only in tables without `compactOnly`): cell entries
 *    without a row entry. A write turns the row compact (or spilled, when too large).
 *
 * A row never has both a compact entry and cell entries: every function here leaves it in exactly
 * one of the forms, and the transaction commits all of a batch or nothing.
 */
import type { Database } from 'lmdb';
import { laterOf } from '../../model/cells/timestamp.js';
import { FOREVER, type EncodedCell, type RowWrite, type TableLayout, type Timestamp } from '../../model/types.js';
import { expiryOf } from '../cell-picker.js';
import { incrementedCounter } from '../counter-rules.js';
import type { RowDelete } from '../store.js';
import { prefixEnd } from '../key-range.js';
import { cellKeyIn, columnPrefix, familyPrefix, LMDB_MAX_KEY, parseCellTail, readInvertedTimestamp, rowPrefix } from './cell-key.js';
import { counterValue, decodeCell, encodeCounterCell, encodeValueCell, isCounterCell } from '../cell-value.js';
import { decodeCompactRow, encodeCompactRow, isCurrentCompact, MAX_COMPACT_COLUMNS, MAX_COMPACT_ROW_BYTES, SPILLED_VALUE, TAG_COMPACT } from './compact-row.js';
import { RowModel } from './row-model.js';

/** The table a writer changes. */
export interface WritableTable {
  readonly db: Database<Buffer, Buffer>;
  readonly layout: TableLayout;
  /** No legacy rows exist (the table was created with compact rows, or upgraded): an absent row entry is an absent row. */
  readonly compactOnly: boolean;
}

/**
 * A legacy row with more cells than this is marked spilled rather than read whole into a compact
 * row: a row of 512 small cells still encodes below MAX_COMPACT_ROW_BYTES, a larger one would
 * mostly be spilled again after the work of reading it.
 */
const LEGACY_COMPACT_MAX_CELLS = 512;

export class RowWriter {
  constructor(private readonly t: WritableTable) {}

  /** Writes one row's validated cells (cells without a timestamp get `now`). Throws RG_ERR_BAD_COUNTER on an overflowing increment. */
  write(row: RowWrite, now: number): void {
    const prefix = rowPrefix(row.rowKey);
    this.change(
      prefix,
      now,
      (model) => model.apply(row.cells, this.t.layout.families, now),
      () => this.writeCells(row.rowKey, prefix, row.cells, now),
    );
  }

  /**
   * Writes a row encoded on another thread (a compact row of the written cells alone, possibly
   * larger than MAX_COMPACT_ROW_BYTES: prepared-batch.ts). A new row of a compactOnly table is one
   * put; an existing one is merged.
   */
  writeEncoded(prefix: Buffer, encoded: Buffer, now: number): void {
    if (this.storedWhole(encoded) && this.t.db.putSync(prefix, encoded, { noOverwrite: true })) return;
    const incoming = decodeCompactRow(encoded);
    this.change(
      prefix,
      now,
      (model) => model.merge(incoming),
      () => this.writeVersions(prefix, incoming, now),
    );
  }

  /**
   * writeEncoded for a row whose key may be above every key of the table (rows written in key
   * order into an empty or lower table): put at the table's end with LMDB's MDB_APPEND, which
   * fills each leaf page and never copies one twice (1,000,000 bench rows: 0.9-1.9 s and a 562 MB
   * file, against 3.3-5.5 s and 1.6 GB put in batches sorted each on its own). 'appended'; or
   * 'below', nothing written, when the table holds a key at or above it; or 'not-compact' (a row
   * to spill, a table that may hold legacy rows): then writeEncoded must write it.
   */
  appendEncoded(prefix: Buffer, encoded: Buffer): 'appended' | 'below' | 'not-compact' {
    if (!this.storedWhole(encoded)) return 'not-compact';
    // lmdb-js answers false when MDB_APPEND refuses the key (its types say void).
    return (this.t.db.putSync(prefix, encoded, { append: true }) as unknown as boolean) ? 'appended' : 'below';
  }

  /** Whether a new row of this encoding is its one entry as it is: a compactOnly table, some columns, within MAX_COMPACT_ROW_BYTES. */
  private storedWhole(encoded: Buffer): boolean {
    return this.t.compactOnly && encoded.readUInt16LE(2) > 0 && encoded.length <= MAX_COMPACT_ROW_BYTES;
  }

  /** Applies one delete (row, family or column; every version or those at or before a timestamp). */
  delete(d: RowDelete): void {
    const prefix = rowPrefix(d.rowKey);
    const entry = this.t.db.get(prefix);
    if (entry !== undefined && entry[0] === TAG_COMPACT) {
      const model = decodeCompactRow(entry);
      model.delete(d);
      this.store(prefix, model);
      return;
    }
    const target =
      d.family === undefined ? prefix : d.qualifier === undefined ? familyPrefix(d.rowKey, d.family) : columnPrefix(d.rowKey, d.family, d.qualifier);
    // No stored key is longer than LMDB's limit, so a longer prefix (a huge qualifier in `cols`)
    // matches nothing; handing it to a cursor would overflow lmdb-js's key buffer.
    if (target.length > LMDB_MAX_KEY) return;
    for (const key of this.t.db.getKeys({ start: target, end: prefixEnd(target) }) as Iterable<Buffer>) {
      if (key.length === prefix.length) continue; // the spilled marker: removed below once no cell is left
      if (d.upToTimestamp === undefined || parseCellTail(key, prefix.length).timestamp <= d.upToTimestamp) this.t.db.removeSync(key);
    }
    if (entry !== undefined && !this.hasCells(prefix)) this.t.db.removeSync(prefix);
  }

  /**
   * Turns a legacy row compact (or spilled, when too large); a row that already has a row entry is
   * left as it is. Returns whether the row was changed.
   */
  upgrade(prefix: Buffer): boolean {
    if (this.t.db.get(prefix) !== undefined) return false;
    const model = this.readCells(prefix, LEGACY_COMPACT_MAX_CELLS);
    if (model === undefined) {
      // Too many cells to be worth reading whole: they stay, marked as a spilled row's.
      this.t.db.putSync(prefix, SPILLED_VALUE);
      return true;
    }
    if (model.isEmpty) return false;
    this.removeCells(prefix);
    this.store(prefix, model);
    return true;
  }

  /** Rewrites a row stored in an earlier compact format in the current one; false when it is not such a row. */
  upgradeFormat(prefix: Buffer): boolean {
    const entry = this.t.db.get(prefix);
    if (entry === undefined || entry[0] !== TAG_COMPACT || isCurrentCompact(entry)) return false;
    this.store(prefix, decodeCompactRow(entry));
    return true;
  }

  // ---------------------------------------------------------------- the three forms

  /**
   * Changes a row whatever its form: `mutate` applies the change to a compact row's model,
   * `spilledWrite` to a spilled row's cell entries.
   */
  private change(prefix: Buffer, now: number, mutate: (model: RowModel) => void, spilledWrite: () => void): void {
    const entry = this.t.db.get(prefix);
    if (entry !== undefined && entry[0] === TAG_COMPACT) {
      const model = decodeCompactRow(entry);
      mutate(model);
      model.trim(this.t.layout.families, now);
      this.store(prefix, model);
      return;
    }
    if (entry !== undefined) {
      spilledWrite();
      return;
    }
    let model = new RowModel();
    if (!this.t.compactOnly && this.hasCells(prefix)) {
      // A legacy row: read whole when small enough, else marked spilled and written cell by cell.
      const legacy = this.readCells(prefix, LEGACY_COMPACT_MAX_CELLS);
      if (legacy === undefined) {
        this.t.db.putSync(prefix, SPILLED_VALUE);
        spilledWrite();
        return;
      }
      this.removeCells(prefix);
      model = legacy;
    }
    mutate(model);
    model.trim(this.t.layout.families, now);
    this.store(prefix, model);
  }

  /**
   * Stores a row model: compact when it fits, else spilled (marker and cell entries, replacing a
   * compact entry); an empty row is removed.
   */
  private store(prefix: Buffer, model: RowModel): void {
    if (model.isEmpty) {
      this.t.db.removeSync(prefix);
      return;
    }
    // More columns than the format counts (u16) cannot be compact, nor fit its size bound anyway.
    const encoded = model.columns.length <= MAX_COMPACT_COLUMNS ? encodeCompactRow(model) : undefined;
    if (encoded !== undefined && encoded.length <= MAX_COMPACT_ROW_BYTES) {
      this.t.db.putSync(prefix, encoded);
      return;
    }
    this.t.db.putSync(prefix, SPILLED_VALUE);
    this.writeVersions(prefix, model, Date.now());
  }

  /** Puts every version of `model` as cell entries of a spilled row, then trims the columns written. */
  private writeVersions(prefix: Buffer, model: RowModel, now: number): void {
    for (const c of model.columns) {
      for (const v of c.versions) {
        const value = v.counter ? encodeCounterCell(BigInt(v.json)) : encodeValueCell(v.schemaId, v.json);
        this.t.db.putSync(cellKeyIn(prefix, c.family, c.qualifier, v.timestamp), value);
      }
    }
    this.trimColumns(prefix, model.columns);
  }

  /** Writes cells of a spilled row as cell entries (increments read the newest counter cell), then trims the columns written. */
  private writeCells(rowKey: Buffer, prefix: Buffer, cells: readonly EncodedCell[], now: number): void {
    for (const cell of cells) {
      if (cell.kind === 'value') {
        this.t.db.putSync(cellKeyIn(prefix, cell.family, cell.qualifier, cell.timestamp ?? now), encodeValueCell(cell.schemaId, cell.json));
      } else if (cell.kind === 'counter-set') {
        this.t.db.putSync(cellKeyIn(prefix, cell.family, cell.qualifier, cell.timestamp ?? now), encodeCounterCell(cell.value));
      } else {
        this.incrementCell(rowKey, prefix, cell.family, cell.qualifier, cell.delta, now);
      }
    }
    this.trimColumns(prefix, cells);
  }

  /**
   * Removes the versions beyond max_versions, and those older than the TTL, of the written columns
   * of a spilled row, each column through its own cursor: a spilled row can hold 100,000 columns,
   * and walking all of them on every write made a single-cell POST into such a row take ~0.5 s
   * (the other columns' expired cells are hidden by reads, and trimmed when they are written).
   */
  private trimColumns(prefix: Buffer, written: readonly { readonly family: string; readonly qualifier: string }[]): void {
    const now = Date.now();
    const done = new Set<string>();
    for (const { family, qualifier } of written) {
      const layout = this.t.layout.families.get(family);
      if (layout === undefined || (layout.maxVersions >= FOREVER && layout.ttlSeconds >= FOREVER)) continue;
      const id = `${family}\0${qualifier}`;
      if (done.has(id)) continue;
      done.add(id);
      const column = cellKeyIn(prefix, family, qualifier, 0).subarray(0, -8);
      const expiredBefore = expiryOf(layout.ttlSeconds, now);
      let seen = 0;
      for (const key of this.t.db.getKeys({ start: column, end: prefixEnd(column) }) as Iterable<Buffer>) {
        if (++seen > layout.maxVersions || readInvertedTimestamp(key, key.length - 8) < expiredBefore) this.t.db.removeSync(key);
      }
    }
  }

  /**
   * Adds `delta` to the newest counter cell of a spilled row's column. A newest cell that has
   * outlived its group's TTL is one no read returns, so the counter restarts from `delta`.
   */
  private incrementCell(rowKey: Buffer, prefix: Buffer, family: string, qualifier: string, delta: bigint, now: number): void {
    const column = columnPrefix(rowKey, family, qualifier);
    const expiredBefore = expiryOf(this.t.layout.families.get(family)!.ttlSeconds, now);
    let current = 0n;
    let timestamp: Timestamp = now;
    for (const { key, value } of this.t.db.getRange({ start: column, end: prefixEnd(column), limit: 1 })) {
      const stored = readInvertedTimestamp(key, key.length - 8);
      if (stored < expiredBefore) break;
      current = counterValue(value);
      // A counter set in the future stays the newest cell: update it in place.
      timestamp = laterOf(now, stored);
    }
    const next = incrementedCounter(current, delta, family, qualifier);
    this.t.db.putSync(cellKeyIn(prefix, family, qualifier, timestamp), encodeCounterCell(next));
  }

  // ---------------------------------------------------------------- cell entries of one row

  /** Whether the row has any cell entry (the current transaction sees its own writes). */
  private hasCells(prefix: Buffer): boolean {
    for (const key of this.t.db.getKeys({ start: prefix, end: prefixEnd(prefix) }) as Iterable<Buffer>) if (key.length > prefix.length) return true;
    return false;
  }

  /** The row's cell entries as a model, or undefined when it has more than `maxCells`. */
  private readCells(prefix: Buffer, maxCells: number): RowModel | undefined {
    const model = new RowModel();
    let n = 0;
    for (const { key, value } of this.t.db.getRange({ start: prefix, end: prefixEnd(prefix) })) {
      if (key.length === prefix.length) continue;
      if (++n > maxCells) return undefined;
      const tail = parseCellTail(key, prefix.length);
      const cell = decodeCell(tail.family, tail.qualifier, tail.timestamp, value);
      model.put(cell.family, cell.qualifier, { timestamp: cell.timestamp, schemaId: cell.schemaId, counter: isCounterCell(value), json: cell.json });
    }
    return model;
  }

  private removeCells(prefix: Buffer): void {
    for (const key of this.t.db.getKeys({ start: prefix, end: prefixEnd(prefix) }) as Iterable<Buffer>)
      if (key.length > prefix.length) this.t.db.removeSync(key);
  }
}
