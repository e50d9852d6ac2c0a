/**
 * The Arrow IPC stream format's stage, after the filter stage (pipeline.ts): batches of rows in,
 * the IPC stream's bytes out (schema first, even for no rows; then one record batch for each batch
 * of rows the scan reads, so memory is bounded by the scan's batch whatever the table's size).
 * Columns and types: lib/rows/formats/arrow-columns.ts. apache-arrow writes every byte.
 */
import { Transform, type Readable, type TransformCallback } from 'node:stream';
import { RecordBatchStreamWriter } from 'apache-arrow';
import { ArrowColumns } from '../formats/arrow-columns.js';
import type { RowOut, TableLayout } from '../../model/types.js';

export class ArrowEncodeStage extends Transform {
  private readonly columns: ArrowColumns;
  private readonly writer = new RecordBatchStreamWriter();
  private readonly bytes: Readable;
  private wroteAny = false;

  /** `versions`: the request's versions (1: each column its newest value; more: a list per column). */
  constructor(layout: TableLayout, versions: number) {
    super({ writableObjectMode: true, writableHighWaterMark: 1 });
    this.columns = new ArrowColumns(layout, versions);
    this.bytes = this.writer.toNodeStream() as unknown as Readable;
    this.bytes.on('data', (c: Uint8Array) => this.push(Buffer.from(c.buffer, c.byteOffset, c.byteLength)));
    this.bytes.on('error', (e: Error) => this.destroy(e));
  }

  override _transform(rows: readonly RowOut[], _enc: BufferEncoding, done: TransformCallback): void {
    try {
      this.writer.write(this.columns.batchOf(rows));
      this.wroteAny = true;
      done();
    } catch (e) {
      done(e as Error);
    }
  }

  override _flush(done: TransformCallback): void {
    try {
      // No rows: the schema alone (an empty batch carries it), then the end of the stream.
      if (!this.wroteAny) this.writer.write(this.columns.batchOf([]));
      this.bytes.once('end', () => done());
      this.writer.close();
    } catch (e) {
      done(e as Error);
    }
  }
}

/** Rows (point and bulk gets) as one whole IPC stream. */
export async function arrowBody(layout: TableLayout, rows: readonly RowOut[], versions: number): Promise<Buffer> {
  const stage = new ArrowEncodeStage(layout, versions);
  const chunks: Buffer[] = [];
  stage.on('data', (c: Buffer) => chunks.push(c));
  const done = new Promise<void>((resolve, reject) => {
    stage.on('end', resolve);
    stage.on('error', reject);
  });
  stage.end(rows);
  await done;
  return Buffer.concat(chunks);
}
