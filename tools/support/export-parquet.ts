/**
 * `rowgate export --format parquet`: the rows of a selection as one Parquet file into an Output,
 * encoded from the rows' cells by lib/rows/stages/parquet.ts (hyparquet-writer). Locally the store
 * scan and the filter stage feed the encoder (one row, --eid, by a point get); from a gateway
 * (`--url`, also with --parallel, whose ranges arrive in key order) its row stream is read back into
 * rows first (documents-to-rows.ts), as the Avro export does.
 */
import { Duplex, Readable, Transform, Writable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import type { RowOut, TableLayout } from '../../lib/model/types.js';
import { ParquetEncodeStage } from '../../lib/rows/stages/parquet.js';
import type { ParquetCodec } from '../../lib/rows/formats/parquet-codecs.js';
import { filteredRows } from '../../lib/rows/stages/pipeline.js';
import { DocumentsToRows } from './documents-to-rows.js';
import type { DumpArgs, DumpResult } from './row-dump.js';

export async function dumpParquet(args: Omit<DumpArgs, 'terminator'> & { readonly codec?: ParquetCodec; readonly rowGroupRows?: number }): Promise<DumpResult> {
  const { selection } = args;
  const read = selection.kind === 'scan' ? selection.request.read : selection.read;
  const rows =
    selection.kind === 'scan'
      ? filteredRows(args.store, args.instance, args.table, selection.request, args.layout)
      : Readable.from(selection.limit === 0 ? [] : [await args.store.get(args.instance, args.table, [selection.rowKey], selection.read)], { objectMode: true });
  const done = { rows: 0, cells: 0, bytes: 0 };
  const counted = new Transform({
    objectMode: true,
    transform: (batch: readonly RowOut[], _enc, next) => {
      done.rows += batch.length;
      for (const row of batch) done.cells += row.cells.length;
      next(null, batch);
    },
  });
  const sink = new Writable({
    write: (chunk: Buffer, _enc, next) => {
      done.bytes += chunk.length;
      args.output.write(chunk).then(() => {
        args.onBatch?.({ ...done });
        next();
      }, next);
    },
  });
  await pipeline(rows, counted, new ParquetEncodeStage(args.layout, read.maxVersions, args.codec, args.rowGroupRows), sink);
  return done;
}

/** CR LF framed documents in (a gateway's row stream), a Parquet file out. */
export function documentsToParquet(layout: TableLayout, versions: number, codec?: ParquetCodec, rowGroupRows?: number): Duplex {
  const rows = new DocumentsToRows(layout.keyFormat);
  const encoder = new ParquetEncodeStage(layout, versions, codec, rowGroupRows);
  rows.on('error', (e) => encoder.destroy(e));
  rows.pipe(encoder);
  return Duplex.from({ writable: rows, readable: encoder });
}
