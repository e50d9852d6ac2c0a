/**
 * `rowgate export --format parquet`: the rows of a selection as one Parquet file into an Output,
 * written by parquet-wasm (lib/rows/stages/parquet.ts). Locally a scan of a store that encodes
 * Arrow batches itself (Store.scanChunks: the LMDB store's scan threads) is written from those
 * batches (lib/rows/stages/parquet-arrow.ts); one row (--eid, by a point get) and the other stores
 * go through the store scan, the filter stage and the Parquet stage. From a gateway (`--url`, also
 * with --parallel, whose ranges arrive in key order) its row stream is read back into rows first
 * (documents-to-rows.ts), as the Avro export does.
 *
 * The writer's modules are imported only once the scan has started: importing parquet-wasm
 * compiles its 5 MB of WebAssembly (~30 ms), and the scan threads start meanwhile.
 */
import { Duplex } from 'node:stream';
import type { TableLayout } from '../../lib/model/types.js';
import type { ParquetCodec } from '../../lib/rows/formats/parquet-codecs.js';
import { parquetChunkSpec } from '../../lib/rows/stages/parquet-spec.js';
import { DocumentsToRows } from './documents-to-rows.js';
import { dumpSource, dumpThroughStage, type DumpArgs, type DumpResult } from './row-dump.js';

const parquetStage = (): Promise<typeof import('../../lib/rows/stages/parquet.js')> => import('../../lib/rows/stages/parquet.js');

export async function dumpParquet(args: Omit<DumpArgs, 'terminator'> & { readonly codec?: ParquetCodec; readonly rowGroupRows?: number }): Promise<DumpResult> {
  const { selection } = args;
  const read = selection.kind === 'scan' ? selection.request.read : selection.read;
  if (selection.kind === 'scan' && args.store.scanChunks !== undefined) {
    const { request } = selection;
    const scan = args.store.scanChunks(args.instance, args.table, request, parquetChunkSpec(request.limit));
    const parquet = await import('../../lib/rows/stages/parquet-arrow.js').then(
      (m) => m.parquetFromArrowChunks(args.layout, read.maxVersions, args.codec, args.rowGroupRows),
      async (e: unknown) => {
        await scan.return();
        throw e;
      },
    );
    return dumpSource(args, parquet.source(scan));
  }
  const { ParquetEncodeStage } = await parquetStage();
  return dumpThroughStage(args, new ParquetEncodeStage(args.layout, read.maxVersions, args.codec, args.rowGroupRows));
}

/** CR LF framed documents in (a gateway's row stream), a Parquet file out. */
export async function documentsToParquet(layout: TableLayout, versions: number, codec?: ParquetCodec, rowGroupRows?: number): Promise<Duplex> {
  const { ParquetEncodeStage } = await parquetStage();
  const rows = new DocumentsToRows(layout.keyFormat);
  const encoder = new ParquetEncodeStage(layout, versions, codec, rowGroupRows);
  rows.on('error', (e) => encoder.destroy(e));
  rows.pipe(encoder);
  return Duplex.from({ writable: rows, readable: encoder });
}
