/**
 * `rowgate export --format parquet`: the rows of a selection as one Parquet file into an Output,
 * encoded from the rows' cells by lib/rows/stages/parquet.ts (hyparquet-writer). Locally the store
 * scan and the filter stage feed the encoder (one row, --eid, by a point get); from a gateway
 * (`--url`, also with --parallel, whose ranges arrive in key order) its row stream is read back into
 * rows first (documents-to-rows.ts), as the Avro export does.
 */
import { Duplex } from 'node:stream';
import type { TableLayout } from '../../lib/model/types.js';
import { ParquetEncodeStage } from '../../lib/rows/stages/parquet.js';
import type { ParquetCodec } from '../../lib/rows/formats/parquet-codecs.js';
import { DocumentsToRows } from './documents-to-rows.js';
import { dumpThroughStage, type DumpArgs, type DumpResult } from './row-dump.js';

export async function dumpParquet(args: Omit<DumpArgs, 'terminator'> & { readonly codec?: ParquetCodec; readonly rowGroupRows?: number }): Promise<DumpResult> {
  const read = args.selection.kind === 'scan' ? args.selection.request.read : args.selection.read;
  return dumpThroughStage(args, new ParquetEncodeStage(args.layout, read.maxVersions, args.codec, args.rowGroupRows));
}

/** CR LF framed documents in (a gateway's row stream), a Parquet file out. */
export function documentsToParquet(layout: TableLayout, versions: number, codec?: ParquetCodec, rowGroupRows?: number): Duplex {
  const rows = new DocumentsToRows(layout.keyFormat);
  const encoder = new ParquetEncodeStage(layout, versions, codec, rowGroupRows);
  rows.on('error', (e) => encoder.destroy(e));
  rows.pipe(encoder);
  return Duplex.from({ writable: rows, readable: encoder });
}
