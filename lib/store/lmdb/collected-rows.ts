/**
 * The visitor half that the encoders working from rows share (avro-chunk.ts, arrow-chunk.ts): the
 * scan cursor's entries go to a RowCollector (the store scan iterator and filter stage), which
 * hands each kept row to the encoder's own callback. ChunkRenderer (chunk-render.ts) writes JSON
 * straight from the stored bytes instead, without rows.
 */
import type { RowCollector } from './row-collector.js';
import type { RowVisitor } from './scan-cursor.js';

export abstract class CollectedRows implements RowVisitor {
  /** Set by the encoder's constructor, with the encoder's callback for each row. */
  protected abstract readonly rows: RowCollector;

  compactRow(key: Buffer, value: Buffer, keepEmpty: boolean, escaped: boolean): boolean {
    return this.rows.compactRow(key, value, keepEmpty, escaped);
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
