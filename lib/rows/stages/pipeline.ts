/**
 * The reference scan pipeline, for any store:
 *
 *   store scan iterator -> FilterStage -> SerializeStage -> FramingStage -> RowStream -> [format] -> [compression] -> response
 *
 * Each stage is a backpressure-aware Transform holding at most one batch each way (highWaterMark
 * 1): a stage reads from the one before only when the one after asks, so a slow client holds the
 * scan's reading back, and a store failure reaches the client after the batches before it. The LMDB store runs the same stages
 * compiled into one loop on its scan threads (lib/store/lmdb/chunk-render.ts);
 * test/store/fused-equivalence.test.ts requires the same bytes from both.
 */
import { pipeline, Readable } from 'node:stream';
import type { TableLayout } from '../../model/types.js';
import type { FramedRenderSpec } from '../row-document.js';
import type { RenderedChunk, ScanRequest, Store } from '../../store/store.js';
import type { ChunkSource } from '../chunk-source.js';
import { FilterStage } from './filter.js';
import { FramingStage } from './framing.js';
import { SerializeStage } from './serialize.js';

/**
 * The rows of `request`, filtered: the store scan iterator and the filter stage, the part every
 * format shares (the row documents' stages follow it below, the Avro format's in avro.ts). A store
 * failure destroys the stream with its error; destroying the stream returns the store scan.
 */
export function filteredRows(store: Store, instance: string, table: string, request: ScanRequest, layout: TableLayout): Readable {
  const scan = store.scan(instance, table, request);
  const source = Readable.from(scan, { objectMode: true, highWaterMark: 1 });
  // A scan destroyed before its first read is returned too (returning twice is harmless).
  source.once('close', () => void scan.return());
  // The error reaches the reader: pipeline destroys the filter stage with it.
  return pipeline(source, new FilterStage(layout, request.read), () => undefined);
}

/** The rows of `request` as framed chunks, through the reference stages. */
export function referenceSource(store: Store, instance: string, table: string, request: ScanRequest, layout: TableLayout, spec: FramedRenderSpec): ChunkSource {
  const stages = pipeline(
    filteredRows(store, instance, table, request, layout),
    new SerializeStage(layout.keyFormat, spec),
    new FramingStage(spec.terminator),
    () => undefined, // errors reach the reader through the iterator below
  );
  const chunks = stages[Symbol.asyncIterator]() as AsyncIterator<RenderedChunk>;
  return {
    next: async () => {
      const r = await chunks.next();
      return r.done ? undefined : r.value;
    },
    close: async () => {
      stages.destroy();
    },
  };
}
