/**
 * A scan's Parquet file from the Arrow record batches a store encodes itself (Store.scanChunks with
 * an ArrowBatchSpec whose unions are structs: the LMDB store builds them on its scan threads,
 * lib/store/lmdb/arrow-chunk.ts), handed to the Parquet stage's writer (parquet.ts: parquet-wasm,
 * its settings, row groups of a bounded size) without being made rows again.
 *
 * Why (docs/architecture.md, bench/README.md): 1,000,000 bench rows, same-minute pairs, snappy:
 * `rowgate export --format parquet` 2.39-2.55 s against 6.04-6.26 s through the rows and
 * hyparquet-writer when this was built; 1.55-1.58 s since the scan threads fill the batches from
 * the stored bytes and load apache-arrow's one-file build.
 */
import type { TableLayout } from '../../model/types.js';
import type { ChunkScan, RenderedChunk } from '../../store/store.js';
import type { PagedChunkSource } from '../chunk-source.js';
import type { ParquetCodec } from '../formats/parquet-codecs.js';
import { arrowStreamParts, type ArrowChunkBody, type ArrowStreamParts } from './arrow.js';
import { parquetBatches, ROW_GROUP_ROWS, writerProperties } from './parquet.js';
import { PARQUET_UNIONS, parquetChunkSpec } from './parquet-spec.js';
import { transformParquetStream, type RecordBatch } from 'parquet-wasm';

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
  /**
   * The scan's failure. parquet-wasm reports an input that fails at its first batch as its own
   * 'Dyn casting error', and one that fails later not at all: it writes the footer and ends the
   * file at the rows it had, so the error is kept here and thrown instead of either.
   */
  let scanError: unknown;
  const input = new ReadableStream<RecordBatch>(
    {
      pull: async (into) => {
        for (;;) {
          let r: IteratorResult<RenderedChunk>;
          try {
            r = await scan.next();
          } catch (e) {
            scanError = e;
            throw e;
          }
          if (r.done === true) {
            // No rows: a batch of none still carries the schema, so the file has its columns.
            if (batches === 0) for (const b of parquetBatches(parts, parts.emptyBatch)) into.enqueue(b);
            into.close();
            return;
          }
          const chunk: RenderedChunk = r.value;
          rows += chunk.rows;
          cells += chunk.cells;
          if (chunk.lastRow !== undefined) nextRowKey = chunk.lastRow.rowKey;
          if (chunk.bytes.length === 0) continue;
          const got = parquetBatches(parts, chunk.bytes);
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
      let r: Awaited<ReturnType<ReadableStreamDefaultReader<Uint8Array>['read']>>;
      try {
        // The writer reads the first batch (the schema) before it answers.
        reader ??= ((await transformParquetStream(input, writerProperties(codec, groupRows))) as ReadableStream<Uint8Array>).getReader();
        r = await reader.read();
      } catch (e) {
        throw scanError ?? e;
      }
      // An input that fails after its first batch ends parquet-wasm's file as if it had ended there.
      if (r.done) {
        if (scanError !== undefined) throw scanError;
        return undefined;
      }
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

/** How a scan of `layout`'s rows at `versions` becomes a Parquet file from a store's Arrow chunks, asked for with unions as structs. */
export function parquetFromArrowChunks(layout: TableLayout, versions: number, codec?: ParquetCodec, groupRows?: number): ArrowChunkBody {
  const parts = arrowStreamParts(layout, versions, PARQUET_UNIONS);
  return {
    spec: parquetChunkSpec,
    source: (scan) => parquetChunkSource(scan, parts, codec, groupRows),
  };
}
