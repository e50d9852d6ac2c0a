/**
 * The Arrow IPC stream format's stage, after the filter stage (pipeline.ts): batches of rows in,
 * the IPC stream's bytes out (schema first, even for no rows; then a record batch each BATCH_ROWS
 * rows and one for the rest, so memory is bounded by that many rows whatever the table's size).
 * Columns and types: lib/rows/formats/arrow-columns.ts. apache-arrow writes every byte.
 */
import { Transform, type Readable, type TransformCallback } from 'node:stream';
import { RecordBatchStreamWriter } from 'apache-arrow';
import { ArrowColumns } from '../formats/arrow-columns.js';
import type { RowOut, TableLayout } from '../../model/types.js';

/**
 * Rows gathered into one record batch: a scan batch is 256 rows, and a record batch that small
 * spent most of its time on builders and batch framing (300,000 bench rows: 1,172 batches).
 * 8,192 rows of the bench table are ~3 MB of JS values at most, held once.
 */
const BATCH_ROWS = 8192;

export class ArrowEncodeStage extends Transform {
  private readonly columns: ArrowColumns;
  private readonly writer = new RecordBatchStreamWriter();
  private readonly bytes: Readable;
  private wroteAny = false;
  private pending: RowOut[] = [];

  /** `versions`: the request's versions (1: each column its newest value; more: a list per column). */
  constructor(
    layout: TableLayout,
    versions: number,
    private readonly batchRows = BATCH_ROWS,
  ) {
    super({ writableObjectMode: true, writableHighWaterMark: 1 });
    this.columns = new ArrowColumns(layout, versions);
    this.bytes = this.writer.toNodeStream() as unknown as Readable;
    this.bytes.on('data', (c: Uint8Array) => this.push(Buffer.from(c.buffer, c.byteOffset, c.byteLength)));
    this.bytes.on('error', (e: Error) => this.destroy(e));
  }

  override _transform(rows: readonly RowOut[], _enc: BufferEncoding, done: TransformCallback): void {
    try {
      for (const row of rows) this.pending.push(row);
      if (this.pending.length >= this.batchRows) this.writePending();
      done();
    } catch (e) {
      done(e as Error);
    }
  }

  private writePending(): void {
    this.writer.write(this.columns.batchOf(this.pending));
    this.pending = [];
    this.wroteAny = true;
  }

  override _flush(done: TransformCallback): void {
    try {
      // No rows: the schema alone (an empty batch carries it), then the end of the stream.
      if (this.pending.length > 0 || !this.wroteAny) this.writePending();
      this.bytes.once('end', () => done());
      this.writer.close();
    } catch (e) {
      done(e as Error);
    }
  }
}
