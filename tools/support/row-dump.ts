/**
 * Streams a store scan as revision 3 row JSON documents, one per line, into an Output: the store
 * is read one chunk at a time (rendered by the store's fast path where it has one, see
 * scanSource) and the next chunk only once the output has drained.
 */
import { scanSource } from '../../lib/http/row-stream.js';
import type { TableLayout } from '../../lib/model/types.js';
import type { ScanRequest, Store } from '../../lib/store/store.js';
import type { Output } from './output.js';

export interface DumpResult {
  readonly rows: number;
  readonly cells: number;
}

export async function dumpRows(args: {
  readonly store: Store;
  readonly instance: string;
  readonly table: string;
  readonly layout: TableLayout;
  readonly request: ScanRequest;
  readonly output: Output;
  /** After each row: CR LF for the row stream format, LF for a terminal. */
  readonly terminator: string;
  readonly onBatch?: (done: DumpResult) => void;
}): Promise<DumpResult> {
  const source = scanSource(args.store, args.instance, args.table, args.request, args.layout.keyFormat, 3, args.terminator);
  let rows = 0;
  let cells = 0;
  try {
    for (let chunk = await source.next(); chunk !== undefined; chunk = await source.next()) {
      rows += chunk.rows;
      cells += chunk.cells;
      await args.output.write(chunk.bytes);
      args.onBatch?.({ rows, cells });
    }
  } finally {
    await source.close();
  }
  return { rows, cells };
}
