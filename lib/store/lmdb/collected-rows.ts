/**
 * The visitor half that the encoders working from rows share (avro-chunk.ts, arrow-chunk.ts): the
 * scan cursor's entries go to a RowCollector (the store scan iterator and filter stage), which
 * hands each kept row to the encoder's own callback. ChunkRenderer (chunk-render.ts) writes JSON
 * straight from the stored bytes instead, without rows.
 *
 * An encoder that can read a compact row's cells from its bytes sets `newest` (NewestCells,
 * stored-columns.ts): a compact row whose newest versions are its answer then goes to its
 * storedRow with the cells by slot, and only the others are collected as rows.
 */
import { LMDB_MAX_KEY, unescapeInto } from './cell-key.js';
import type { RowCollector } from './row-collector.js';
import type { RowVisitor } from './scan-cursor.js';
import type { NewestCells } from './stored-columns.js';

export abstract class CollectedRows implements RowVisitor {
  /** Set by the encoder's constructor, with the encoder's callback for each row. */
  protected abstract readonly rows: RowCollector;
  /** The encoder's walk of compact rows' newest cells, or undefined when it takes every row from the RowCollector. */
  protected abstract readonly newest: NewestCells | undefined;

  /**
   * A compact row read by `newest` (its cells in the slots, `cells` of them, at least one), with
   * its row key: valid until the next row (a view of a scratch buffer), so read or copied at once.
   */
  protected storedRow(_rowKey: Buffer, _value: Buffer, _cells: number): void {
    throw new Error('an encoder that sets newest takes its rows in storedRow');
  }

  /** Row keys of rows read by `newest`, unescaped here one after another. */
  private keyScratch: Buffer | undefined;
  /**
   * Views of the scratch buffer by length, made once each: a table's keys come in few lengths,
   * so a row's key costs no object. Each is read before the next row is unescaped into it.
   */
  private readonly keyViews: Buffer[] = [];

  compactRow(key: Buffer, value: Buffer, keepEmpty: boolean, escaped: boolean): boolean {
    const cells = this.newestCells(value);
    // A row with no selected cell is dropped, as the RowCollector drops it.
    if (cells <= 0) return cells < 0 && this.rows.compactRow(key, value, keepEmpty, escaped);
    this.storedRow(escaped ? this.unescapedKey(key, 0, key.length) : key, value, cells);
    return true;
  }

  /**
   * compactRow of a scan thread's entry read in place: its row prefix is `keys[start, end)` of
   * lmdb-js's key buffer (a view and a new Buffer a row took 10-15% of the JSON scan's time:
   * ChunkRenderer.compactRowAt); a row collected as cells gets a view of the prefix.
   */
  compactRowAt(keys: Buffer, start: number, end: number, value: Buffer): boolean {
    const cells = this.newestCells(value);
    if (cells <= 0) return cells < 0 && this.rows.compactRow(keys.subarray(start, end), value, false, true);
    this.storedRow(this.unescapedKey(keys, start, end), value, cells);
    return true;
  }

  /** The row key of the row prefix `keys[start, end)`, unescaped into the scratch buffer and seen through the view kept for its length. */
  private unescapedKey(keys: Buffer, start: number, end: number): Buffer {
    const scratch = (this.keyScratch ??= Buffer.allocUnsafe(LMDB_MAX_KEY));
    const n = unescapeInto(scratch, keys, start, end);
    return (this.keyViews[n] ??= scratch.subarray(0, n));
  }

  /** The cells `newest` read of the compact row in `value` (0: none selected), or -1 when the row is to be collected. */
  private newestCells(value: Buffer): number {
    const newest = this.newest;
    return newest !== undefined && newest.suits(value) ? newest.of(value) : -1;
  }

  beginRow(rowKey: Buffer): void {
    this.rows.beginRow(rowKey);
  }

  cell(key: Buffer, rowEnd: number, value: Buffer, valueEnd: number): void {
    this.rows.cell(key, rowEnd, value, valueEnd);
  }

  endRow(): boolean {
    return this.rows.endRow();
  }
}
