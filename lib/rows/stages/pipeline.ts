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
 * format shares (the Avro format's stages follow it directly: avro.ts). Destroying it returns the
 * store scan.
 */
export function filteredRows(store: Store, instance: string, table: string, request: ScanRequest, layout: TableLayout): Readable {
  const scan = store.scan(instance, table, request);
  const source = Readable.from(scan, { objectMode: true, highWaterMark: 1 });
  // Readable.from returns the iterator when destroyed; a scan not started yet is returned here too.
  source.once('close', () => void scan.return());
  return source.pipe(new FilterStage(layout, request.read)).once('close', () => source.destroy());
}

/** The rows of `request` as framed chunks, through the reference stages. */
export function referenceSource(store: Store, instance: string, table: string, request: ScanRequest, layout: TableLayout, spec: FramedRenderSpec): ChunkSource {
  const scan = store.scan(instance, table, request);
  const stages = pipeline(
    Readable.from(scan, { objectMode: true, highWaterMark: 1 }),
    new FilterStage(layout, request.read),
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
      await scan.return();
    },
  };
}
