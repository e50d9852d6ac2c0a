/**
 * `rowgate import --instance I --table T FILE.ndjson|-`: one row a line in the revision 3 POST
 * shape ({"entityId": [...], "cells": {family: {qualifier: [{value, timestamp?, writer_schema?}]}}}),
 * read as a stream and written in batches of --batch rows, each batch one atomic store write.
 * Blank lines are skipped; CR LF line ends are accepted, so an export imports as it is.
 *
 * Every row of a batch is validated and encoded before the batch is written. A bad line stops the
 * import: the batches before it are committed (the message says up to which line), nothing of the
 * batch holding the bad line is written. Reading, parsing and encoding run on a worker thread
 * (import-worker.ts) while this thread writes the batches: two batch writes may be outstanding
 * while the worker parses the next one (for the embedded store's prepared batches, which nothing
 * but the environment can make fail; batches that go through Store.write are written alone). A
 * batch whose write fails stops the import; the message names its lines, and any later batch that
 * was written meanwhile.
 */
import { statSync } from 'node:fs';
import { Worker } from 'node:worker_threads';
import type { Command } from 'commander';
import { isRowgateError } from '../../lib/errors.js';
import type { SchemaTable } from '../../lib/model/types.js';
import { LmdbStore } from '../../lib/store/lmdb/lmdb-store.js';
import type { Store } from '../../lib/store/store.js';
import { CliError } from '../support/cli-error.js';
import { rateText, startProgress } from '../support/progress.js';
import { positiveInteger } from '../support/read-options.js';
import { withStore, withStoreOptions, type StoreFlags } from '../support/store-options.js';
import type { FromImportWorker, ImportWorkerData, ToImportWorker } from './import-worker.js';

/** Rows per atomic write: big enough that commits (one fsync each) are a small part of the time. */
export const DEFAULT_IMPORT_BATCH = 10_000;

interface ImportFlags extends StoreFlags {
  readonly instance: string;
  readonly table: string;
  readonly batch: number;
}

export function registerImport(program: Command): void {
  withStoreOptions(program.command('import').description('import rows from NDJSON (one row a line, in the POST shape); each batch is written atomically'))
    .requiredOption('--instance <name>', 'instance')
    .requiredOption('--table <name>', 'table')
    .option('--batch <rows>', 'rows per atomic store write', positiveInteger, DEFAULT_IMPORT_BATCH)
    .argument('<file>', 'NDJSON file, or - for standard input')
    .action(async (file: string, flags: ImportFlags) => {
      await withStore(flags, { create: false }, ({ store }) => importRows(store, file, flags));
    });
}

/** A batch handed to the store: its lines, rows and cells, and how to write it. */
interface Batch {
  readonly firstLine: number;
  readonly lastLine: number;
  readonly rows: number;
  readonly cells: number;
  readonly write: () => Promise<void>;
  /**
   * Written alone (nothing else in flight, the next batch only after it): Store.write can refuse a
   * batch (a counter overflow, a key over the store's limit), and no later batch may be written then.
   */
  readonly alone: boolean;
}

/** The outcome of a store write; never rejects, so no rejection goes unhandled while parsing on. */
type WriteOutcome = { readonly ok: true; readonly batch: Batch } | { readonly ok: false; readonly batch: Batch; readonly error: unknown };

/** Batches parsed and waiting for their write to start. */
const PARSED_AHEAD = 1;
/**
 * Batch writes started before the oldest is acknowledged. With 2, the next batch's transaction
 * runs while the previous one is flushed to disk (the main thread was idle 25% of the time waiting
 * for it): 1,000,000 rows x 5 cells at 123,000 and 126,000 cells/s against 109,000 with 1 and
 * 114,000 with 3 (same load). Each batch is still one transaction's part, acknowledged only once durable.
 */
const WRITES_AHEAD = 2;
// Under the test runner this module is TypeScript source; the worker inherits its loader flags.
const WORKER_URL = new URL(import.meta.url.endsWith('.ts') ? './import-worker.ts' : './import-worker.js', import.meta.url);

async function importRows(store: Store, file: string, flags: ImportFlags): Promise<void> {
  const layout = await store.getLayout(flags.instance, flags.table);
  const schemas = await store.schemaTable(flags.instance);
  const input = inputSize(file);
  const started = performance.now();
  const progress = startProgress(
    input.size === undefined ? 'importing {rows} rows | {cells} cells | {rate} cells/s | {duration_formatted}' : 'importing |{bar}| {percentage}% | {rows} rows | {cells} cells | {rate} cells/s | ETA {eta_formatted}',
    input.size,
    { rows: 0, cells: 0, rate: 0 },
  );
  // The embedded store takes batches already encoded into its keys and values (prepared-batch.ts).
  const lmdb = store instanceof LmdbStore ? store : undefined;
  // Credit for the batches being written plus those parsed ahead: credit comes back as writes settle.
  const workerData: ImportWorkerData = { file, layout: layout.desc, maxRowKeyBytes: store.maxRowKeyBytes, batch: flags.batch, ahead: WRITES_AHEAD + PARSED_AHEAD, prepare: lmdb !== undefined };
  const worker = new Worker(WORKER_URL, { workerData, stdin: file === '-' });
  if (file === '-') {
    if (process.stdin.isTTY) process.stderr.write('reading rows from standard input (end with Ctrl-D)\n');
    process.stdin.pipe(worker.stdin!);
  }
  const messages = new MessageQueue(worker);

  let committedRows = 0;
  let committedCells = 0;
  let bytesRead = 0;
  /** Writes started and not yet settled, oldest first. */
  const inFlight: Promise<WriteOutcome>[] = [];
  /** Waits for the oldest batch being written; on failure stops the import naming its lines. */
  const settleOldest = async (): Promise<void> => {
    const outcome = await inFlight.shift()!;
    if (!outcome.ok) {
      const { batch, error } = outcome;
      const why = isRowgateError(error) ? error.message : error instanceof Error ? error.message : String(error);
      // A later batch may have been written meanwhile: wait for those, so the message is true.
      const later = (await Promise.all(inFlight.splice(0))).filter((o) => o.ok).map((o) => `${o.batch.firstLine}-${o.batch.lastLine}`);
      const laterText = later.length === 0 ? '' : `\nexcept lines ${later.join(', ')}, which were written`;
      throw new CliError(`writing lines ${batch.firstLine}-${batch.lastLine} failed: ${why}\n${stoppedText(batch.firstLine, committedRows, committedCells)}${laterText}`);
    }
    committedRows += outcome.batch.rows;
    committedCells += outcome.batch.cells;
    progress.update(bytesRead, { rows: committedRows, cells: committedCells, rate: rateText(committedCells, (performance.now() - started) / 1000) });
    // One more batch may be parsed ahead.
    worker.postMessage({ type: 'credit' } satisfies ToImportWorker);
  };
  const settle = async (): Promise<void> => {
    while (inFlight.length > 0) await settleOldest();
  };
  const startWrite = async (batch: Batch): Promise<void> => {
    while (inFlight.length >= (batch.alone ? 1 : WRITES_AHEAD)) await settleOldest();
    inFlight.push(
      batch.write().then(
        (): WriteOutcome => ({ ok: true, batch }),
        (error: unknown): WriteOutcome => ({ ok: false, batch, error }),
      ),
    );
    if (batch.alone) await settle();
  };

  try {
    for (;;) {
      const m = await messages.next();
      if (m.type === 'batch') {
        bytesRead = m.bytesRead;
        // Buffers arrive from the worker as plain Uint8Arrays: views, no copy.
        for (const row of m.rows as { rowKey: Uint8Array }[]) row.rowKey = Buffer.from(row.rowKey.buffer, row.rowKey.byteOffset, row.rowKey.byteLength);
        const rows = m.rows;
        await startWrite({ firstLine: m.firstLine, lastLine: m.lastLine, rows: rows.length, cells: m.cells, write: () => store.write(flags.instance, flags.table, rows), alone: true });
      } else if (m.type === 'prepared') {
        bytesRead = m.bytesRead;
        const batch = m.batch;
        await startWrite({ firstLine: m.firstLine, lastLine: m.lastLine, rows: batch.rows, cells: m.cells, write: () => lmdb!.writePrepared(flags.instance, flags.table, batch), alone: false });
      } else if (m.type === 'schema') {
        answerSchema(worker, schemas, m);
      } else if (m.type === 'bad-line') {
        await settle();
        throw new CliError(`line ${m.line}: ${m.message}\n${stoppedText(m.firstLine, committedRows, committedCells)}`);
      } else if (m.type === 'failed') {
        await settle();
        throw new Error(m.message);
      } else {
        await settle();
        break;
      }
    }
  } catch (e) {
    await Promise.all(inFlight);
    throw e;
  } finally {
    progress.stop();
    if (file === '-') process.stdin.unpipe(worker.stdin!);
    await worker.terminate();
  }
  const seconds = (performance.now() - started) / 1000;
  process.stdout.write(`imported ${committedRows} rows, ${committedCells} cells in ${seconds.toFixed(2)} s (${rateText(committedCells, seconds)} cells/s)\n`);
}

/** Answers a schema-table look-up of the worker from the store (never rejects). */
function answerSchema(worker: Worker, schemas: SchemaTable, m: Extract<FromImportWorker, { type: 'schema' }>): void {
  const op = m.op === 'schemaOf' ? schemas.schemaOf(m.arg as number) : schemas.idOf(m.arg as string);
  op.then(
    (value) => worker.postMessage({ type: 'schema-answer', id: m.id, value } satisfies ToImportWorker),
    (e: unknown) => worker.postMessage({ type: 'schema-error', id: m.id, code: isRowgateError(e) ? e.code : undefined, message: e instanceof Error ? e.message : String(e) } satisfies ToImportWorker),
  );
}

/** The worker's messages in order; an error or exit of the worker before its last message rejects. */
class MessageQueue {
  private readonly queue: FromImportWorker[] = [];
  private waiter: { resolve: (m: FromImportWorker) => void; reject: (e: unknown) => void } | undefined;
  private failure: unknown;

  constructor(worker: Worker) {
    worker.on('message', (m: FromImportWorker) => {
      const w = this.waiter;
      this.waiter = undefined;
      if (w) w.resolve(m);
      else this.queue.push(m);
    });
    const fail = (e: unknown): void => {
      this.failure ??= e;
      const w = this.waiter;
      this.waiter = undefined;
      w?.reject(this.failure);
    };
    worker.on('error', fail);
    worker.on('exit', (code) => fail(new Error(`the import's parsing thread stopped (exit code ${code})`)));
  }

  next(): Promise<FromImportWorker> {
    const m = this.queue.shift();
    if (m !== undefined) return Promise.resolve(m);
    if (this.failure !== undefined) return Promise.reject(this.failure);
    return new Promise((resolve, reject) => (this.waiter = { resolve, reject }));
  }
}

/** What was committed when an import stops before `firstLine` (the first line of the batch not written). */
function stoppedText(firstLine: number, rows: number, cells: number): string {
  if (rows === 0) return 'nothing was imported';
  return `rows before line ${firstLine} were imported (${rows} rows, ${cells} cells); nothing from line ${firstLine} on was written`;
}

/** Checks the input before the worker opens it: its size (a regular file), or undefined (stdin, pipes). */
function inputSize(file: string): { readonly size: number | undefined } {
  if (file === '-') return { size: undefined };
  try {
    const stat = statSync(file);
    if (stat.isDirectory()) throw new CliError(`cannot import ${file}: it is a directory`);
    return { size: stat.isFile() ? stat.size : undefined };
  } catch (e) {
    if (e instanceof CliError) throw e;
    throw new CliError(`cannot read ${file}: ${(e as Error).message}`);
  }
}
