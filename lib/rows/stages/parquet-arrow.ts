/**
 * A scan's Parquet file from the Arrow record batches a store encodes itself (Store.scanChunks with
 * an ArrowBatchSpec: the LMDB store builds them on its scan threads, lib/store/lmdb/arrow-chunk.ts),
 * written by parquet-wasm (the Rust `parquet` crate compiled to WebAssembly): its streaming writer,
 * transformParquetStream, takes the batches one at a time and gives each row group's bytes as it is
 * done, so memory is bounded by one row group whatever the table's size. No byte of Parquet's
 * encoding here.
 *
 * Why (docs/architecture.md, bench/README.md): 1,000,000 bench rows, same-minute pairs, snappy:
 * `rowgate export --format parquet` 2.39-2.55 s against 6.04-6.26 s through the reference stages
 * and hyparquet-writer (stages/parquet.ts); the file about the same size (32.7 against 32.2 MB)
 * once a dictionary is given up after 16 KiB (parquet-wasm's default 1 MiB built one for every
 * unique column before giving it up: 41.1 MB, and ~0.5 s slower).
 *
 * parquet-wasm 0.8.0 cannot write Arrow's union type (it traps: `RuntimeError: unreachable`), which
 * arrow-columns.ts gives a layout's unions: `writableByArrowWriter` says whether a plan's schema
 * has one, and such a table keeps the reference stage.
 */
import type { Schema } from 'apache-arrow';
import { Compression, Table, transformParquetStream, WriterPropertiesBuilder, type RecordBatch, type WriterProperties } from 'parquet-wasm';
import type { TableLayout } from '../../model/types.js';
import type { ChunkScan, RenderedChunk } from '../../store/store.js';
import type { PagedChunkSource } from '../chunk-source.js';
import { hasUnion } from '../formats/arrow-columns.js';
import type { ParquetCodec } from '../formats/parquet-codecs.js';
import { arrowStreamParts, type ArrowStreamParts } from './arrow.js';
import { ROW_GROUP_ROWS } from './parquet.js';

const COMPRESSION: Readonly<Record<ParquetCodec, Compression>> = {
  snappy: Compression.SNAPPY,
  gzip: Compression.GZIP,
  brotli: Compression.BROTLI,
  uncompressed: Compression.UNCOMPRESSED,
};

/**
 * A column's dictionary is given up once it reaches this many bytes: the bench table's five
 * unique columns then cost 16 KiB of dictionary a row group, not 1 MiB, and its two
 * low-cardinality ones (97 and 1,000 values) keep theirs (32.7 MB against 33.4 MB at 64 KiB).
 */
const DICTIONARY_PAGE_BYTES = 16_384;

/** Whether parquet-wasm writes every column of `schema` (no union anywhere in it). */
export function writableByArrowWriter(schema: Schema): boolean {
  return !schema.fields.some((f) => hasUnion(f.type));
}

function writerProperties(codec: ParquetCodec, groupRows: number): WriterProperties {
  return new WriterPropertiesBuilder()
    .setCompression(COMPRESSION[codec])
    .setMaxRowGroupSize(groupRows)
    .setDictionaryPageSizeLimit(DICTIONARY_PAGE_BYTES)
    .setCreatedBy('rowgate')
    .build();
}

/**
 * The Parquet file of a scan's Arrow chunks, as a ChunkSource of its bytes: each chunk counts the
 * rows and cells read from the scan since the last one (the footer, last, counts the rest).
 * `nextRowKey`: the row read past the limit (ArrowBatchSpec's `rows`), once the scan has ended.
 * A scan that fails makes the next `next()` fail.
 */
export function parquetChunkSource(
  scan: ChunkScan,
  parts: ArrowStreamParts,
  codec: ParquetCodec = 'snappy',
  groupRows: number = ROW_GROUP_ROWS,
): PagedChunkSource {
  let rows = 0;
  let cells = 0;
  let told = { rows: 0, cells: 0 };
  let batches = 0;
  let nextRowKey: Buffer | undefined;
  const batchesOf = (message: Uint8Array): RecordBatch[] => {
    const table = Table.fromIPCStream(Buffer.concat([parts.schema, message, parts.end]));
    try {
      return table.recordBatches();
    } finally {
      table.free();
    }
  };
  const input = new ReadableStream<RecordBatch>(
    {
      pull: async (into) => {
        for (;;) {
          const r = await scan.next();
          if (r.done === true) {
            // No rows: a batch of none still carries the schema, so the file has its columns.
            if (batches === 0) for (const b of batchesOf(parts.emptyBatch)) into.enqueue(b);
            into.close();
            return;
          }
          const chunk: RenderedChunk = r.value;
          rows += chunk.rows;
          cells += chunk.cells;
          if (chunk.lastRow !== undefined) nextRowKey = chunk.lastRow.rowKey;
          if (chunk.bytes.length === 0) continue;
          const got = batchesOf(chunk.bytes);
          chunk.release?.();
          batches += got.length;
          for (const b of got) into.enqueue(b);
          return;
        }
      },
      cancel: async () => {
        await scan.return();
      },
    },
    { highWaterMark: 1 },
  );
  let reader: ReadableStreamDefaultReader<Uint8Array> | undefined;
  return {
    get nextRowKey() {
      return nextRowKey;
    },
    next: async () => {
      reader ??= ((await transformParquetStream(input, writerProperties(codec, groupRows))) as ReadableStream<Uint8Array>).getReader();
      const r = await reader.read();
      if (r.done) return undefined;
      const chunk = { bytes: Buffer.from(r.value.buffer, r.value.byteOffset, r.value.byteLength), rows: rows - told.rows, cells: cells - told.cells };
      told = { rows, cells };
      return chunk;
    },
    close: async () => {
      await reader?.cancel();
      await scan.return();
    },
  };
}

/**
 * How a scan of `layout`'s rows at `versions` becomes a Parquet file from a store's Arrow chunks
 * (a scan with arrowBatchSpec's spec), or undefined when parquet-wasm cannot write its columns (a
 * union): the caller keeps the reference stage (stages/parquet.ts).
 */
export function parquetFromArrowChunks(
  layout: TableLayout,
  versions: number,
  codec?: ParquetCodec,
  groupRows?: number,
): ((scan: ChunkScan) => PagedChunkSource) | undefined {
  const parts = arrowStreamParts(layout, versions);
  if (!writableByArrowWriter(parts.schemaOf)) return undefined;
  return (scan) => parquetChunkSource(scan, parts, codec, groupRows);
}
