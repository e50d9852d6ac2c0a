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
import type { RowCollector } from './row-collector.js';
import { rowKeyOf, type RowVisitor } from './scan-cursor.js';
import type { NewestCells } from './stored-columns.js';

export abstract class CollectedRows implements RowVisitor {
  /** Set by the encoder's constructor, with the encoder's callback for each row. */
  protected abstract readonly rows: RowCollector;
  /** The encoder's walk of compact rows' newest cells, or undefined when it takes every row from the RowCollector. */
  protected abstract readonly newest: NewestCells | undefined;

  /**
   * A compact row read by `newest` (its cells in the slots, `cells` of them, at least one), with
   * its row key (a view of the key read where nothing was escaped: used before the next read).
   */
  protected storedRow(_rowKey: Buffer, _value: Buffer, _cells: number): void {
    throw new Error('an encoder that sets newest takes its rows in storedRow');
  }

  compactRow(key: Buffer, value: Buffer, keepEmpty: boolean, escaped: boolean): boolean {
    const newest = this.newest;
    const cells = newest !== undefined && newest.suits(value) ? newest.of(value) : -1;
    if (cells < 0) return this.rows.compactRow(key, value, keepEmpty, escaped);
    // A row with no selected cell is dropped, as the RowCollector drops it.
    if (cells === 0) return false;
    this.storedRow(escaped ? rowKeyOf(key, key.length) : key, value, cells);
    return true;
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
