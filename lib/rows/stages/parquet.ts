/**
 * The Parquet format's stage, after the filter stage (pipeline.ts): batches of rows in, a Parquet
 * file's bytes out. The rows become Arrow record batches (formats/arrow-columns.ts, the Arrow
 * stream's column plan with each union a struct of its branches: Parquet has no union) and
 * parquet-wasm (the Rust `parquet` crate compiled to WebAssembly) writes the file from them: no
 * byte of Parquet's encoding here. A scan of a store that encodes Arrow batches itself hands those
 * to the same writer instead (parquet-arrow.ts: the LMDB store's scan threads); this stage writes
 * the rest: Bigtable, point gets and `export --url`.
 *
 * parquet-wasm's streaming writer takes the batches one at a time and gives each row group's bytes
 * when it is done, so memory is bounded by a row group whatever the table's size. Back-pressure
 * both ways: rows wait until the writer has taken the batch before them, and the writer's next
 * bytes wait until the reader of this stage wants more. The footer (the schema and every group's
 * offsets) follows the last group, so a Parquet file, like an Avro one, is not cut at a row: an
 * export of it cannot be resumed.
 *
 * One writer for every path: hyparquet-writer wrote this stage until parquet-wasm was given each
 * union as a struct (it cannot write Arrow's union: `RuntimeError: unreachable`); parquet-wasm
 * wrote the bench table's scan 2.4-2.6x faster (docs/architecture.md).
 */
import { Transform, type TransformCallback } from 'node:stream';
import { Compression, Table, transformParquetStream, WriterPropertiesBuilder, type RecordBatch, type WriterProperties } from 'parquet-wasm';
import type { RowOut, TableLayout } from '../../model/types.js';
import type { ParquetCodec } from '../formats/parquet-codecs.js';
import { arrowStreamParts, BATCH_ROWS, type ArrowStreamParts } from './arrow.js';
import { PARQUET_UNIONS } from './parquet-spec.js';

/**
 * Rows a row group. DuckDB reads row groups in parallel, and 1,000,000 rows make 16 of them; the
 * writer holds one group's encoded columns at a time.
 */
export const ROW_GROUP_ROWS = 65_536;

const COMPRESSION: Readonly<Record<ParquetCodec, Compression>> = {
  snappy: Compression.SNAPPY,
  gzip: Compression.GZIP,
  brotli: Compression.BROTLI,
  zstd: Compression.ZSTD,
  uncompressed: Compression.UNCOMPRESSED,
};

/**
 * A column's dictionary is given up once it reaches this many bytes: the bench table's five
 * unique columns then cost 16 KiB of dictionary a row group, not 1 MiB (parquet-wasm's default,
 * 41.1 MB and ~0.5 s slower), and its two low-cardinality ones (97 and 1,000 values) keep theirs
 * (32.7 MB against 33.4 MB at 64 KiB).
 */
const DICTIONARY_PAGE_BYTES = 16_384;

/** The writer's settings: the codec, row groups of `groupRows`, the dictionary limit above. */
export function writerProperties(codec: ParquetCodec, groupRows: number): WriterProperties {
  return new WriterPropertiesBuilder()
    .setCompression(COMPRESSION[codec])
    .setMaxRowGroupSize(groupRows)
    .setDictionaryPageSizeLimit(DICTIONARY_PAGE_BYTES)
    .setCreatedBy('rowgate')
    .build();
}

/** A batch message of `parts`' stream (ArrowStreamParts.messageOf) as parquet-wasm's record batches. */
export function parquetBatches(parts: ArrowStreamParts, message: Uint8Array): RecordBatch[] {
  const table = Table.fromIPCStream(Buffer.concat([parts.schema, message, parts.end]));
  try {
    return table.recordBatches();
  } finally {
    table.free();
  }
}

export class ParquetEncodeStage extends Transform {
  private readonly parts: ArrowStreamParts;
  private pending: RowOut[] = [];
  private batches = 0;
  /** The writer's input: batches are enqueued here and pulled by parquet-wasm. */
  private feed!: ReadableStreamDefaultController<RecordBatch>;
  /** Resolves the rows waiting for the writer to take the batch before them. */
  private wanted: (() => void) | undefined;
  /** Resolves the writer's output waiting for this stage's reader. */
  private readWanted: (() => void) | undefined;
  private readonly written: Promise<void>;

  /** `versions`: the request's versions (1: each column its newest value; more: a list per column). */
  constructor(
    layout: TableLayout,
    versions: number,
    codec: ParquetCodec = 'snappy',
    groupRows: number = ROW_GROUP_ROWS,
    private readonly batchRows = BATCH_ROWS,
  ) {
    super({ writableObjectMode: true, writableHighWaterMark: 1 });
    this.parts = arrowStreamParts(layout, versions, PARQUET_UNIONS);
    const input = new ReadableStream<RecordBatch>(
      {
        start: (controller) => {
          this.feed = controller;
        },
        pull: () => this.wake(),
      },
      { highWaterMark: 1 },
    );
    this.written = this.pass(input, writerProperties(codec, groupRows));
    // A writer failure ends the stage (flush also waits for it, so it is never left unhandled).
    this.written.catch((e: unknown) => this.destroy(e as Error));
  }

  private wake(): void {
    const wanted = this.wanted;
    this.wanted = undefined;
    wanted?.();
  }

  /** The writer's bytes into this stage's output, as the reader takes them. */
  private async pass(input: ReadableStream<RecordBatch>, properties: WriterProperties): Promise<void> {
    const reader = ((await transformParquetStream(input, properties)) as ReadableStream<Uint8Array>).getReader();
    for (;;) {
      const r = await reader.read();
      if (r.done || this.destroyed) return;
      if (!this.push(Buffer.from(r.value.buffer, r.value.byteOffset, r.value.byteLength))) await new Promise<void>((resolve) => (this.readWanted = resolve));
    }
  }

  override _read(size: number): void {
    const readWanted = this.readWanted;
    this.readWanted = undefined;
    readWanted?.();
    super._read(size);
  }

  override _transform(rows: readonly RowOut[], _enc: BufferEncoding, done: TransformCallback): void {
    this.gather(rows).then(() => done(), done);
  }

  /**
   * Batches of exactly `batchRows` rows, wherever the rows arrive cut: parquet-wasm's pages follow
   * its input's batches, so the file is then the same bytes for the same rows (an `export --url`'s
   * rows arrive as the network cuts them).
   */
  private async gather(rows: readonly RowOut[]): Promise<void> {
    for (const row of rows) {
      this.pending.push(row);
      if (this.pending.length === this.batchRows) await this.writePending();
    }
  }

  /** The rows gathered as one batch to the writer; resolves once it has room for the next. */
  private async writePending(): Promise<void> {
    const rows = this.pending;
    this.pending = [];
    for (const b of parquetBatches(this.parts, this.parts.messageOf(this.parts.columns.batchOf(rows)))) this.feed.enqueue(b);
    this.batches++;
    if ((this.feed.desiredSize ?? 1) <= 0) await new Promise<void>((resolve) => (this.wanted = resolve));
  }

  override _flush(done: TransformCallback): void {
    const finish = async (): Promise<void> => {
      // No rows: a batch of none still carries the schema, so the file has its columns.
      if (this.pending.length > 0 || this.batches === 0) await this.writePending();
      this.feed.close();
      await this.written;
    };
    finish().then(() => done(), done);
  }

  override _destroy(error: Error | null, callback: (error?: Error | null) => void): void {
    // The writer's input ends with the stage, and nothing waits on a reader or writer gone.
    try {
      this.feed.error(error ?? new Error('the Parquet stage was closed'));
    } catch {
      // Already closed or errored.
    }
    this.wake();
    this.readWanted?.();
    callback(error);
  }
}
