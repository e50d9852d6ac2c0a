/**
 * The Parquet codecs rowgate offers (`export --codec`), apart from the stage (stages/parquet.ts) so
 * the CLI can list them without loading a writer. snappy is the default: the fastest of the
 * four, and Parquet readers expect it by default; gzip and brotli are smaller and slower. Both
 * writers have all four (parquet-arrow.ts: parquet-wasm's own; parquet.ts: hyparquet-writer's
 * snappy, node:zlib's gzip and brotli); no zstd, which parquet-wasm has but node 20's zlib, the
 * other writer's, has not.
 */
export const PARQUET_CODECS = ['snappy', 'gzip', 'brotli', 'uncompressed'] as const;
export type ParquetCodec = (typeof PARQUET_CODECS)[number];
