/**
 * The Parquet codecs rowgate offers (`export --codec`), apart from the stage (stages/parquet.ts) so
 * the CLI can list them without loading the writer. snappy is the default: hyparquet-writer has
 * it built in, it is the fastest of the four, and Parquet readers expect it by default; gzip and
 * brotli (node:zlib) are smaller and slower; no zstd (node 20's zlib has none).
 */
export const PARQUET_CODECS = ['snappy', 'gzip', 'brotli', 'uncompressed'] as const;
export type ParquetCodec = (typeof PARQUET_CODECS)[number];
