/**
 * The Avro format's stages, after the filter stage (pipeline.ts): rows in, an Avro object
 * container file out (its header first, even for no rows), encoded from the cells
 * (lib/model/avro/avro-export.ts) with avsc's BlockEncoder; no row document is rendered or read
 * back. LimitStage ends a scan at its limit and names the first row not sent, as RowStream does for
 * the JSON formats.
 */
import { Transform, type TransformCallback } from 'node:stream';
import { deflateRaw } from 'node:zlib';
import avro from 'avsc';
import type { AvroCodec } from '../../model/avro/avro-codecs.js';
import { avroExportOf } from '../../model/avro/avro-export.js';
import type { RowOut, TableLayout } from '../../model/types.js';
import { wholeBody } from './whole-body.js';

/** Passes at most `limit` rows (-1: all); onEnd is told the rows passed and the key of the first row held back, before the stream ends. */
export class LimitStage extends Transform {
  rowsSent = 0;
  private nextRowKey: Buffer | undefined;

  constructor(
    private readonly limit: number,
    private readonly onEnd: (rowsSent: number, nextRowKey: Buffer | undefined) => void,
    /** Told the running row count after every batch (the request log). */
    private readonly onRows: (rowsSent: number) => void = () => undefined,
  ) {
    super({ objectMode: true, highWaterMark: 1 });
  }

  override _transform(rows: readonly RowOut[], _enc: BufferEncoding, done: TransformCallback): void {
    if (this.nextRowKey !== undefined) return done();
    let kept = rows;
    if (this.limit >= 0 && this.rowsSent + rows.length > this.limit) {
      kept = rows.slice(0, this.limit - this.rowsSent);
      this.nextRowKey = rows[kept.length]!.rowKey;
    }
    this.rowsSent += kept.length;
    this.onRows(this.rowsSent);
    done(null, kept.length > 0 ? kept : undefined);
  }

  override _flush(done: TransformCallback): void {
    try {
      this.onEnd(this.rowsSent, this.nextRowKey);
      done();
    } catch (e) {
      done(e as Error);
    }
  }
}

/**
 * The container file's block codecs (avro-container.ts): null and deflate. snappy and zstd are
 * not offered: node 20's zlib has no zstd, and a snappy codec would need a native npm package this
 * project does not install.
 */
export { AVRO_CODECS, type AvroCodec } from '../../model/avro/avro-codecs.js';
// Passing codecs replaces avsc's own table, so null is named here too.
const CODECS = { null: (b: Buffer, cb: (e: Error | null, out?: Buffer) => void) => cb(null, b), deflate: deflateRaw };

/** Batches of rows in, the container file's bytes out. */
export class AvroEncodeStage extends Transform {
  private readonly encoder: avro.streams.BlockEncoder;
  private readonly rowValue: (row: RowOut) => unknown;
  private failure: Error | undefined;

  /** `withSchema`: cells carry their writer schema id (false for revision 1, whose documents have none: -1). */
  constructor(layout: TableLayout, withSchema = true, codec: AvroCodec = 'null') {
    super({ writableObjectMode: true, writableHighWaterMark: 1 });
    const exp = avroExportOf(layout);
    this.rowValue = (row) => exp.rowValue(row, withSchema);
    this.encoder = new avro.streams.BlockEncoder(exp.type, { codec, codecs: CODECS, writeHeader: true } as never);
    this.encoder.on('data', (c: Buffer) => this.push(c));
    this.encoder.on('typeError', (e: Error) => {
      this.failure ??= e;
    });
  }

  override _transform(rows: readonly RowOut[], _enc: BufferEncoding, done: TransformCallback): void {
    try {
      for (const row of rows) this.encoder.write(this.rowValue(row));
      done(this.failure);
    } catch (e) {
      done(e as Error);
    }
  }

  override _flush(done: TransformCallback): void {
    this.encoder.once('end', () => done(this.failure));
    this.encoder.end();
  }
}

/** Rows (point and bulk gets) as one whole container file. */
export function avroBody(layout: TableLayout, rows: readonly RowOut[], withSchema: boolean): Promise<Buffer> {
  return wholeBody(new AvroEncodeStage(layout, withSchema), rows);
}
