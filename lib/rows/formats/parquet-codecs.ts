/**
 * The Parquet codecs rowgate offers (`export --codec`), apart from the stage (stages/parquet.ts) so
 * the CLI can list them without loading a writer. snappy is the default: the fastest of the
 * five, and Parquet readers expect it by default; zstd, gzip and brotli are smaller and slower. All
 * are parquet-wasm's own (stages/parquet.ts writerProperties).
 */
export const PARQUET_CODECS = ['snappy', 'gzip', 'brotli', 'zstd', 'uncompressed'] as const;
export type ParquetCodec = (typeof PARQUET_CODECS)[number];
