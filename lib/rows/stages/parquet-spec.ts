/**
 * What a Parquet body asks of a store's scan (Store.scanChunks): Arrow chunks with each union a
 * struct, more parts rendered ahead, and a core left to the writer. Apart from the writer
 * (parquet.ts, parquet-arrow.ts) so that importing this does not compile parquet-wasm: an export
 * starts its scan threads first and loads the writer while they start (tools/support/export-parquet.ts).
 */
import { availableParallelism } from 'node:os';
import type { ArrowBatchSpec } from '../../store/store.js';
import type { UnionForm } from '../formats/arrow-columns.js';
import { arrowBatchSpec } from './arrow.js';

/** Parquet has no union: a union column is a struct of its branches, the value's branch set and the others null (pyarrow and DuckDB read `col.int`). */
export const PARQUET_UNIONS: UnionForm = 'struct';

/**
 * Parts each scan thread renders ahead of the one being read (ArrowBatchSpec's aheadParts; 2 by
 * default). parquet-wasm holds the main thread while it writes, and no part is handed out
 * meanwhile: the threads, two parts ahead (~40,000 rows, less than a row group), then waited for
 * it. Exports of the 1,000,000 bench rows, alternated: 1.15-1.17 s at 4 against 1.20 s at 2 and
 * 1.28 s at 1; 8 and 16 were no faster. A JSON or Avro export, whose reader does not stall so,
 * was the same at 4 (0.94 s, 1.25-1.28 s), and keeps 2.
 */
const PARQUET_AHEAD_PARTS = 4;

/**
 * Scan threads at most (ArrowBatchSpec's threads): one core fewer than the machine's, at least
 * one. The writer keeps the calling thread busy (~0.3 s of parquet-wasm for the 1,000,000 bench
 * rows), so on 2 cores a second scan thread only took turns with it, and its start-up and
 * compiling cost ~13% more CPU. With the scan started before the writer loads
 * (export-parquet.ts), the export of those rows took 1.063 s against 1.105 s (1.69 s of CPU
 * against 1.93 s; ten alternated pairs); one thread alone, 1.068 s against 1.128 s.
 */
export function parquetScanThreads(cores: number = availableParallelism()): number {
  return Math.max(1, cores - 1);
}

/** The ArrowBatchSpec of a Parquet body's scan: at most `limit` rows (-1: all). */
export function parquetChunkSpec(limit: number): ArrowBatchSpec {
  return arrowBatchSpec(limit, { unions: PARQUET_UNIONS, aheadParts: PARQUET_AHEAD_PARTS, threads: parquetScanThreads() });
}
