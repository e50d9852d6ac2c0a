/**
 * Streams a store scan as revision 3 row JSON documents, one per line, into an Output: the store
 * is read one batch at a time and the next batch only once the output has drained.
 */
import { ROW_TERMINATOR, rowRenderSpec, rowSerializer } from '../../lib/http/row-format.js';
import type { TableLayout } from '../../lib/model/types.js';
import type { ScanRequest, Store } from '../../lib/store/store.js';
import type { Output } from './output.js';

export interface DumpResult {
  readonly rows: number;
  readonly cells: number;
}

interface DumpArgs {
  readonly store: Store;
  readonly instance: string;
  readonly table: string;
  readonly layout: TableLayout;
  readonly request: ScanRequest;
  readonly output: Output;
  /** After each row: CR LF for the row stream format, LF for a terminal. */
  readonly terminator: string;
  readonly onBatch?: (done: DumpResult) => void;
}

export async function dumpRows(args: DumpArgs): Promise<DumpResult> {
  if (args.store.scanChunks && args.terminator === ROW_TERMINATOR) return dumpChunks(args, args.store.scanChunks.bind(args.store));
  const serialize = rowSerializer(args.layout.keyFormat, 3);
  const scan = args.store.scan(args.instance, args.table, args.request);
  let rows = 0;
  let cells = 0;
  try {
    for (;;) {
      const next = await scan.next();
      if (next.done) break;
      let chunk = '';
      for (const row of next.value) {
        chunk += serialize(row) + args.terminator;
        cells += row.cells.length;
      }
      rows += next.value.length;
      await args.output.write(chunk);
      args.onBatch?.({ rows, cells });
    }
  } finally {
    await scan.return();
  }
  return { rows, cells };
}

/**
 * The store's fast path: rows rendered straight to CR LF framed bytes (on the embedded store by
 * several threads for a whole-table export), the same bytes as the row serializer's.
 */
async function dumpChunks(args: DumpArgs, scanChunks: NonNullable<Store['scanChunks']>): Promise<DumpResult> {
  const scan = scanChunks(args.instance, args.table, args.request, rowRenderSpec(3));
  let rows = 0;
  let cells = 0;
  try {
    for (;;) {
      const next = await scan.next();
      if (next.done) break;
      rows += next.value.rows;
      cells += next.value.cells;
      await args.output.write(next.value.bytes);
      args.onBatch?.({ rows, cells });
    }
  } finally {
    await scan.return();
  }
  return { rows, cells };
}
