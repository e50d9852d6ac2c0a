/** Where a RowStream's chunks come from: the store's fused loop or the reference stages (row-stream.ts scanSource). */
import type { RenderedChunk } from '../store/store.js';

export interface ChunkSource {
  /** The next chunk of framed rows; undefined at the end. */
  next(): Promise<RenderedChunk | undefined>;
  /** Ends the scan (early, or after the end): releases what it holds. */
  close(): Promise<void>;
}

/** A source that encodes at most a limit's rows itself (Arrow, Parquet from Arrow): once ended, the row read past the limit, where the next page starts. */
export interface PagedChunkSource extends ChunkSource {
  readonly nextRowKey: Buffer | undefined;
}
