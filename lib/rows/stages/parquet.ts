/**
 * The Parquet format's stage, after the filter stage (pipeline.ts): batches of rows in, a Parquet
 * file's bytes out, written by hyparquet-writer (no byte of Parquet's encoding here). A scan of a
 * store that encodes Arrow batches itself is written from those instead (parquet-arrow.ts,
 * parquet-wasm: 2.4-2.6x faster); this stage writes the rest: Bigtable, point gets, `export --url`
 * and layouts with a union, which parquet-wasm cannot write. Rows are
 * gathered into row groups of ROW_GROUP_ROWS; each group is encoded and its bytes pushed before the
 * next is gathered, so memory is bounded by one group whatever the table's size. The footer (the
 * schema and every group's offsets) follows the last group, so a Parquet file, like an Avro one, is
 * not cut at a row: an export of it cannot be resumed.
 *
 * Codecs (formats/parquet-codecs.ts): hyparquet-writer compresses SNAPPY itself (the default);
 * GZIP and BROTLI by node:zlib; UNCOMPRESSED.
 */
import { Transform, type TransformCallback } from 'node:stream';
import { brotliCompressSync, gzipSync } from 'node:zlib';
import { ByteWriter, ParquetWriter } from 'hyparquet-writer';
import type { RowOut, TableLayout } from '../../model/types.js';
import { ParquetColumns } from '../formats/parquet-columns.js';
import type { ParquetCodec } from '../formats/parquet-codecs.js';

const CODEC_NAME = { snappy: 'SNAPPY', gzip: 'GZIP', brotli: 'BROTLI', uncompressed: 'UNCOMPRESSED' } as const;
const COMPRESSORS = {
  GZIP: (b: Uint8Array): Uint8Array => gzipSync(b),
  BROTLI: (b: Uint8Array): Uint8Array => brotliCompressSync(b),
};

/**
 * Rows a row group. 65,536 rows of the bench table's columns are ~25 MB of JavaScript values at
 * most, held once; DuckDB reads row groups in parallel, and 1,000,000 rows make 16 of them.
 */
export const ROW_GROUP_ROWS = 65_536;

/** A ByteWriter that hands its bytes on after each row group (and at the end) instead of keeping the file. */
class PushingWriter extends ByteWriter {
  constructor(private readonly out: (bytes: Buffer) => void) {
    super(1 << 20);
  }

  flush(): void {
    if (this.index === 0) return;
    // Copied: the writer's buffer is reused for the next group.
    this.out(Buffer.from(new Uint8Array(this.buffer, 0, this.index)));
    this.index = 0;
  }

  override finish(): void {
    this.flush();
  }
}

export class ParquetEncodeStage extends Transform {
  private readonly columns: ParquetColumns;
  private readonly writer: ParquetWriter;
  private readonly groupRows: number;
  private pending: RowOut[] = [];

  /** `versions`: the request's versions (1: each column its newest value; more: a list per column). */
  constructor(layout: TableLayout, versions: number, codec: ParquetCodec = 'snappy', groupRows?: number) {
    super({ writableObjectMode: true, writableHighWaterMark: 1 });
    this.groupRows = groupRows ?? ROW_GROUP_ROWS;
    this.columns = new ParquetColumns(layout, versions);
    this.writer = new ParquetWriter({
      writer: new PushingWriter((b) => this.push(b)),
      schema: this.columns.schema,
      codec: CODEC_NAME[codec],
      compressors: COMPRESSORS,
      createdBy: 'rowgate',
    });
  }

  override _transform(rows: readonly RowOut[], _enc: BufferEncoding, done: TransformCallback): void {
    try {
      for (const row of rows) {
        this.pending.push(row);
        if (this.pending.length >= this.groupRows) this.writePending();
      }
      done();
    } catch (e) {
      done(e as Error);
    }
  }

  private writePending(): void {
    const rows = this.pending;
    this.pending = [];
    const data = this.columns.columnsOf(rows);
    // One write a group: hyparquet-writer's rowGroupSize of the whole batch makes it one row group.
    void this.writer.write({ columnData: this.columns.names.map((name, i) => ({ name, data: data[i]! })), rowGroupSize: rows.length });
  }

  override _flush(done: TransformCallback): void {
    try {
      if (this.pending.length > 0) this.writePending();
      void this.writer.finish();
      done();
    } catch (e) {
      done(e as Error);
    }
  }
}
