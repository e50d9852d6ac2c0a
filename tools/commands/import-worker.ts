/**
 * The parsing half of `rowgate import`, on a worker thread: reads the NDJSON input, decodes (UTF-8
 * or refused), parses and validates every line and encodes it (decodeUtf8, parseExactJson,
 * encodeRowInput: what a POST body's rows go through), and hands complete batches
 * of RowWrite to the main thread, which writes them to the store. Parsing and encoding were 40% of
 * the import's time on one thread (profile of 200,000 rows x 5 cells): on a second core they
 * overlap the store writes.
 *
 * The worker runs at most `ahead` batches ahead of the batches the main thread has written (one
 * credit per written batch), so memory stays bounded when the store is the slower half. Schema
 * table look-ups (cold caches only: a few per import) are answered by the main thread's store.
 */
import { createReadStream } from 'node:fs';
import { parentPort, workerData } from 'node:worker_threads';
import { isRowgateError, rgError, type ErrorCode } from '../../lib/errors.js';
import { parseExactJson } from '../../lib/model/exact-json.js';
import { parseLayout } from '../../lib/model/layout.js';
import { encodeRowInput, encodeRowInputCached, type RowInputContext } from '../../lib/model/row-input.js';
import type { RowWrite, SchemaEntry, SchemaTable } from '../../lib/model/types.js';
import { decodeUtf8 } from '../../lib/model/utf8-pieces.js';
import { packRows, type PreparedBatch } from '../../lib/store/lmdb/prepared-batch.js';
import { byteLines } from '../support/byte-lines.js';

export interface ImportWorkerData {
  /** The NDJSON file, or - for standard input (the main thread pipes it to the worker's stdin). */
  readonly file: string;
  readonly layout: Record<string, unknown>;
  readonly maxRowKeyBytes: number | undefined;
  readonly batch: number;
  /** Batches the worker may hand over before the first is written. */
  readonly ahead: number;
  /** Hand batches over packed for the embedded store (prepared-batch.ts) where they fit the format. */
  readonly prepare: boolean;
}

/** Worker -> main. */
export type FromImportWorker =
  | { readonly type: 'batch'; readonly firstLine: number; readonly lastLine: number; readonly rows: RowWrite[]; readonly cells: number; readonly bytesRead: number }
  | { readonly type: 'prepared'; readonly firstLine: number; readonly lastLine: number; readonly batch: PreparedBatch; readonly cells: number; readonly bytesRead: number }
  /** A line that is not a valid row; `firstLine` is the first line of its (unwritten) batch. */
  | { readonly type: 'bad-line'; readonly line: number; readonly firstLine: number; readonly message: string }
  | { readonly type: 'failed'; readonly message: string }
  | { readonly type: 'end' }
  | { readonly type: 'schema'; readonly id: number; readonly op: 'schemaOf' | 'idOf'; readonly arg: number | string };

/** Main -> worker. */
export type ToImportWorker =
  | { readonly type: 'credit' }
  | { readonly type: 'schema-answer'; readonly id: number; readonly value: number | string | undefined }
  | { readonly type: 'schema-error'; readonly id: number; readonly code: ErrorCode | undefined; readonly message: string };

const port = parentPort!;
const data = workerData as ImportWorkerData;

let credit = data.ahead;
let creditWaiter: (() => void) | undefined;
const schemaRequests = new Map<number, { resolve: (v: number | string | undefined) => void; reject: (e: unknown) => void }>();
let nextRequest = 1;

port.on('message', (m: ToImportWorker) => {
  if (m.type === 'credit') {
    credit++;
    const w = creditWaiter;
    creditWaiter = undefined;
    w?.();
    return;
  }
  const pending = schemaRequests.get(m.id);
  if (pending === undefined) return;
  schemaRequests.delete(m.id);
  if (m.type === 'schema-answer') pending.resolve(m.value);
  else pending.reject(m.code !== undefined ? rgError(m.code, m.message) : new Error(m.message));
});

function askMain(op: 'schemaOf' | 'idOf', arg: number | string): Promise<number | string | undefined> {
  const id = nextRequest++;
  return new Promise((resolve, reject) => {
    schemaRequests.set(id, { resolve, reject });
    port.postMessage({ type: 'schema', id, op, arg } satisfies FromImportWorker);
  });
}

/** The instance's schema table, through the main thread (the store is open there). */
const schemas: SchemaTable = {
  schemaOf: async (id) => (await askMain('schemaOf', id)) as string | undefined,
  idOf: async (json) => (await askMain('idOf', json)) as number,
  entries: (): Promise<SchemaEntry[]> => Promise.reject(new Error('schema table entries are not needed to import rows')),
};

function post(m: FromImportWorker): void {
  port.postMessage(m);
}

async function run(): Promise<void> {
  const ctx: RowInputContext = { layout: parseLayout(data.layout), schemas, maxRowKeyBytes: data.maxRowKeyBytes };
  const stream = data.file === '-' ? process.stdin : createReadStream(data.file, { highWaterMark: 256 * 1024 });
  const bytesRead = (): number => ('bytesRead' in stream ? (stream.bytesRead as number) : 0);
  let lineNo = 0;
  let rows: RowWrite[] = [];
  let cells = 0;
  let firstLine = 0;
  const handOver = async (): Promise<void> => {
    // Packed before waiting for credit: the worker packs this batch while the main thread writes the last.
    const prepared = data.prepare ? packRows(rows, ctx.layout, data.maxRowKeyBytes ?? Infinity) : undefined;
    while (credit === 0) await new Promise<void>((resolve) => (creditWaiter = resolve));
    credit--;
    if (prepared !== undefined) {
      port.postMessage({ type: 'prepared', firstLine, lastLine: lineNo, batch: prepared, cells, bytesRead: bytesRead() } satisfies FromImportWorker, [prepared.bytes.buffer as ArrayBuffer]);
    } else {
      post({ type: 'batch', firstLine, lastLine: lineNo, rows, cells, bytesRead: bytesRead() });
    }
    rows = [];
    cells = 0;
  };
  try {
    for await (const raw of byteLines(stream as AsyncIterable<Buffer>)) {
      lineNo++;
      // A byte order mark some editors put at the start of a file is not part of the first row.
      const bytes = lineNo === 1 && raw[0] === 0xef && raw[1] === 0xbb && raw[2] === 0xbf ? raw.subarray(3) : raw;
      if (isBlank(bytes)) continue;
      if (rows.length === 0) firstLine = lineNo;
      let row: RowWrite;
      try {
        // The row as a POST body's row is read: UTF-8 or refused, then the same parser.
        const item = parseExactJson(decodeUtf8(bytes, 'the row'), 'the row');
        // Synchronous once the caches are warm: no promise per row or cell.
        ({ row } = encodeRowInputCached(item, ctx) ?? (await encodeRowInput(item, ctx)));
      } catch (e) {
        if (!isRowgateError(e)) throw e;
        post({ type: 'bad-line', line: lineNo, firstLine, message: e.message });
        return;
      }
      rows.push(row);
      cells += row.cells.length;
      if (rows.length >= data.batch) await handOver();
    }
    if (rows.length > 0) await handOver();
    post({ type: 'end' });
  } catch (e) {
    post({ type: 'failed', message: e instanceof Error ? e.message : String(e) });
  } finally {
    stream.destroy();
  }
}

function isBlank(line: Uint8Array): boolean {
  for (let i = 0; i < line.length; i++) {
    const c = line[i];
    if (c !== 0x20 && c !== 0x09 && c !== 0x0d) return false;
  }
  return true;
}

// The main thread ends the worker once it has the last message (the port keeps it alive till then).
await run();
