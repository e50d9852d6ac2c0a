/**
 * A parsing thread of `rowgate import`: takes batches of raw lines from the main thread (which
 * reads the input and writes to the store), decodes (UTF-8 or refused), parses and validates every
 * line and encodes it (decodeUtf8, parseExactJson, encodeRowInput: what a POST body's rows go
 * through), and hands each batch back packed for the embedded store (prepared-batch.ts, encoded
 * and sorted by key) or as RowWrite objects (other stores, and rows the packed format does not
 * carry). Parsing and encoding are most of an import's CPU (a single parsing thread was saturated
 * while the writing thread idled 58%: profile of 200,000 rows x 5 cells), so the main thread runs
 * several of these, one batch each at a time, and writes their batches back in input order.
 *
 * Schema table look-ups (cold caches only: a few per import) are answered by the main thread's store.
 */
import { parentPort, workerData } from 'node:worker_threads';
import { isRowgateError, rgError, type ErrorCode } from '../../lib/errors.js';
import { parseExactJson } from '../../lib/model/json/exact-json.js';
import { parseLayout } from '../../lib/model/layout/layout.js';
import { encodeRowInput, encodeRowInputCached, type RowInputContext } from '../../lib/model/cells/row-input.js';
import type { RowWrite, SchemaEntry, SchemaTable } from '../../lib/model/types.js';
import { decodeUtf8 } from '../../lib/model/json/utf8-pieces.js';
import { rowPacker, type RowPacker } from '../../lib/store/row-packer.js';
import type { PackedRows, StorePacking } from '../../lib/store/store.js';
import type { LinesPart } from '../support/line-cutter.js';
import type { Reject } from '../support/import-rejects.js';

export interface ImportWorkerData {
  readonly layout: Record<string, unknown>;
  readonly maxRowKeyBytes: number | undefined;
  /** Hand batches over packed for the store (Store.packing, lib/store/row-packer.ts) where they fit its packed form; undefined: as row objects. */
  readonly packing: StorePacking | undefined;
  /** Refused lines are reported (Reject) and parsing goes on (--max-bad-lines above 0); false: a part stops at its first bad line. */
  readonly tolerant: boolean;
}

/** Main -> worker: a batch of lines to parse. Row i is `bytes[starts[i], ends[i])`, from input line `lines[i]`. */
export interface LinesBatch extends LinesPart {
  readonly type: 'lines';
  readonly index: number;
}

/** Worker -> main. Every message but `schema` answers the batch `index`. */
export type FromImportWorker =
  | { readonly type: 'batch'; readonly index: number; readonly rows: RowWrite[]; readonly cells: number; readonly rejects: Reject[] }
  /** `lines`: the lines packed (the batch may hold fewer rows: lines of one row are merged). */
  | {
      readonly type: 'prepared';
      readonly index: number;
      readonly batch: PackedRows;
      readonly lines: number;
      readonly cells: number;
      readonly rejects: Reject[];
    }
  /** A line that is not a valid row: nothing of its batch is to be written. */
  | { readonly type: 'bad-line'; readonly index: number; readonly line: number; readonly message: string }
  | { readonly type: 'failed'; readonly index: number; readonly message: string }
  | { readonly type: 'schema'; readonly id: number; readonly op: 'schemaOf' | 'idOf'; readonly arg: number | string };

/** Main -> worker. */
export type ToImportWorker =
  | LinesBatch
  | { readonly type: 'schema-answer'; readonly id: number; readonly value: number | string | undefined }
  | { readonly type: 'schema-error'; readonly id: number; readonly code: ErrorCode | undefined; readonly message: string };

const port = parentPort!;
const data = workerData as ImportWorkerData;

const schemaRequests = new Map<number, { resolve: (v: number | string | undefined) => void; reject: (e: unknown) => void }>();
let nextRequest = 1;

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

const ctx: RowInputContext = { layout: parseLayout(data.layout), schemas, maxRowKeyBytes: data.maxRowKeyBytes };

/** The batches' packer, made at the first batch (its size) and reused: finish and clear empty it. */
let packer: RowPacker | undefined;
/** The batch being parsed (batches are parsed one after another). */
let parsing: Promise<void> = Promise.resolve();

/**
 * Parses, validates and hands back one batch (or its first bad line). Rows are packed as they are
 * parsed (the store's packer: a row's objects die young); a row the packed format does not carry (a
 * counter increment, a key over the store's limit) sends the whole batch the other way: it is
 * parsed again from its lines and handed back as RowWrite objects, for Store.write.
 */
async function parseBatch(m: LinesBatch): Promise<void> {
  if (data.packing !== undefined) {
    // The packer keeps what it learnt of the layout between batches.
    packer ??= rowPacker(data.packing, ctx.layout, schemas, data.maxRowKeyBytes ?? Infinity, m.bytes.byteLength * 2);
    // Empty, whatever an earlier batch that stopped left in it.
    packer.clear();
    const rejects: Reject[] = [];
    const cells = await parseLines(m, (row) => packer!.add(row), rejects, packer);
    if (cells === BAD_LINE) return;
    if (cells !== UNPACKABLE) {
      const prepared = packer.finish();
      const lines = m.lines.length - rejects.length;
      port.postMessage({ type: 'prepared', index: m.index, batch: prepared, lines, cells, rejects } satisfies FromImportWorker, [
        prepared.bytes.buffer as ArrayBuffer,
      ]);
      return;
    }
  }
  const rows: RowWrite[] = [];
  const rejects: Reject[] = [];
  const cells = await parseLines(m, (row) => rows.push(row) > 0, rejects);
  if (cells !== BAD_LINE) port.postMessage({ type: 'batch', index: m.index, rows, cells, rejects } satisfies FromImportWorker);
}

/** parseLines' answer when a line was bad (and reported). */
const BAD_LINE = -1;
/** parseLines' answer when `take` refused a row. */
const UNPACKABLE = -2;

/**
 * Decodes, parses and encodes every line of the batch, handing each row to `take`; answers the
 * cells taken. A bad line stops the part (BAD_LINE, reported), or, tolerant, goes to `rejects`. With `packer`, a line it packs straight from its bytes (addLine) skips `take`.
 */
async function parseLines(m: LinesBatch, take: (row: RowWrite) => boolean, rejects: Reject[], packer?: RowPacker): Promise<number> {
  const bytes = Buffer.from(m.bytes.buffer, m.bytes.byteOffset, m.bytes.byteLength);
  let cells = 0;
  for (let i = 0; i < m.lines.length; i++) {
    if (packer !== undefined) {
      const plain = packer.addLine(bytes, m.starts[i]!, m.ends[i]!, Date.now());
      if (plain > 0) {
        cells += plain;
        continue;
      }
    }
    let row: RowWrite;
    try {
      // The row as a POST body's row is read: UTF-8 or refused, then the same parser.
      const item = parseExactJson(decodeUtf8(bytes.subarray(m.starts[i], m.ends[i]), 'the row'), 'the row');
      // Synchronous once the caches are warm: no promise per row or cell.
      ({ row } = encodeRowInputCached(item, ctx) ?? (await encodeRowInput(item, ctx)));
    } catch (e) {
      if (!isRowgateError(e)) throw e;
      if (data.tolerant) {
        // A copy: the part's buffer is dropped once the part is answered.
        rejects.push({ line: m.lines[i]!, reason: e.message, text: Uint8Array.prototype.slice.call(bytes, m.starts[i], m.ends[i]) });
        continue;
      }
      port.postMessage({ type: 'bad-line', index: m.index, line: m.lines[i]!, message: e.message } satisfies FromImportWorker);
      return BAD_LINE;
    }
    if (!take(row)) return UNPACKABLE;
    cells += row.cells.length;
  }
  return cells;
}

port.on('message', (m: ToImportWorker) => {
  if (m.type === 'lines') {
    // One batch at a time, in the order they came: they share the packer, and a batch waiting for
    // a schema look-up must not let the next one in.
    parsing = parsing.then(() =>
      parseBatch(m).catch((e: unknown) =>
        port.postMessage({ type: 'failed', index: m.index, message: e instanceof Error ? e.message : String(e) } satisfies FromImportWorker),
      ),
    );
    return;
  }
  const pending = schemaRequests.get(m.id);
  if (pending === undefined) return;
  schemaRequests.delete(m.id);
  if (m.type === 'schema-answer') pending.resolve(m.value);
  else pending.reject(m.code !== undefined ? rgError(m.code, m.message) : new Error(m.message));
});
