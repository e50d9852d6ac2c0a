/**
 * `rowgate import --instance I --table T FILE.ndjson|-`: one row a line in the revision 3 POST
 * shape ({"entityId": [...], "cells": {family: {qualifier: [{value, timestamp?, writer_schema?}]}}}),
 * read as a stream and written in batches of --batch rows, each batch one atomic store write.
 * Blank lines are skipped; CR LF line ends are accepted, so an export imports as it is.
 *
 * Every row of a batch is validated and encoded before the batch is written. A bad line stops the
 * import: the batches before it are committed (the message says up to which line), nothing of the
 * batch holding the bad line is written. This thread reads the input and cuts each batch into
 * parts of lines (line-cutter.ts); parsing threads (import-worker.ts, --threads) decode, parse,
 * validate and encode the parts in parallel; this thread writes each batch, all its parts
 * together (Store.writePacked; the embedded store merges them into key order), in input order: two batch writes may be
 * outstanding (for the embedded store's prepared batches, which nothing but the environment can
 * make fail; batches that go through Store.write are written alone). A batch whose write fails
 * stops the import; the message names its lines, and any later batch that was written meanwhile.
 *
 * With --max-bad-lines N the parsing threads refuse bad lines instead of stopping at them; a
 * batch's refused lines go to the reject files (synced) before it is handed to the store
 * (import-rejects.ts), and the (N+1)th stops the import as above. After each committed batch
 * FILE.import-progress says where the import stands (import-progress.ts); on the embedded store the
 * same record is committed in the batch's transaction (a Store BatchMarker), and --resume starts
 * from that one where it is ahead of the file.
 */
import { createReadStream, statSync } from 'node:fs';
import { availableParallelism } from 'node:os';
import { resolve } from 'node:path';
import { Worker } from 'node:worker_threads';
import { InvalidArgumentError, type Command } from 'commander';
import { isRowgateError } from '../../lib/errors.js';
import type { RowWrite, SchemaTable } from '../../lib/model/types.js';
import type { BatchMarker, Store } from '../../lib/store/store.js';
import { CliError, EXIT_USAGE } from '../support/cli-error.js';
import { rateText, startProgress } from '../support/progress.js';
import { positiveInteger, withStoreOptions } from '../support/command-options.js';
import { withStore, type StoreFlags } from '../support/store-options.js';
import { LineCutter } from '../support/line-cutter.js';
import { defaultRejectFile, reasonsPath, RejectFiles, type Reject } from '../support/import-rejects.js';
import { progressPath, readProgress, removeProgress, resumedFromMarker, writeProgress, type ImportProgress } from '../support/import-progress.js';
import type { FromImportWorker, ImportWorkerData, LinesBatch, ToImportWorker } from './import-worker.js';

/**
 * Rows per atomic write, by default. A batch is parsed in parts of PART_ROWS on every thread and
 * written in one transaction in key order across all its parts: into an empty table (or above its
 * keys) its rows are appended, each leaf page filled and written once. A later batch scatters over
 * the rows already written (salted keys) and copies most of the table's leaf pages again, so bigger
 * batches write less; but the last batch's write follows all parsing, so a batch too large only
 * makes that wait longer. Same machine, 1,000,000 rows each: the bench's rows (290 MB of NDJSON)
 * took 5.3 s in one batch, 6.6 s in batches of 500,000, 7.3 s of 200,000; the demo rows (860 MB)
 * 18.7 s, 13.8 s and 16.4 s. Hence also DEFAULT_BATCH_BYTES. `--batch` trades memory for speed.
 */
export const DEFAULT_IMPORT_BATCH = 1_000_000;
/**
 * Without `--batch`, a batch also ends once its lines reach this many bytes (at a part's end): the
 * bench's 290 MB stay one batch, the demo's 860 MB are cut in two, the fastest of the sizes above
 * for each; and a batch's memory (its lines, then its packed rows, then LMDB's dirty pages) stays
 * bounded whatever the rows' size.
 */
export const DEFAULT_BATCH_BYTES = 448 * 1024 * 1024;
/**
 * The default batch of stores that take rows as objects (Bigtable): each batch is one Store.write
 * of RowWrite objects (about 440 bytes a row in memory, its mutations as much again), and nothing
 * is merged or appended there, so a bigger batch only holds more memory.
 */
export const DEFAULT_OBJECT_BATCH = 200_000;

interface ImportFlags extends StoreFlags {
  readonly instance: string;
  readonly table: string;
  readonly batch?: number;
  readonly threads?: number;
  readonly maxBadLines: number;
  readonly rejectFile?: string;
  readonly resume?: boolean;
}

/** The contract, in `rowgate import --help` (docs/cli.md says the same at length). */
const CONTRACT = `
How an import commits (docs/cli.md, import):
  Each batch is one atomic store write; the file as a whole is not. Batches are committed in input order.
  A bad line stops the import: the batches before its batch stay committed, nothing of its batch or
  after it is written.
  A crash (kill -9, power loss) leaves every batch committed before it whole, and nothing of the others.
  FILE.import-progress, rewritten after each committed batch and removed when the import ends well,
  names the first line not committed; --resume starts there (a bad line may have been fixed
  meanwhile). On the embedded store (--data) the same record is committed with each batch, so
  --resume never imports a committed batch again; on Bigtable a batch committed just before a
  crash, its record not yet written, is imported again: the same cells where timestamps are given,
  one more version where not, {"incr": n} added again.
  --max-bad-lines N: up to N bad lines are refused instead of stopping it, each to the reject file
  (the line as read) and REJECT.reasons (line number, reason) before its batch is written; --resume
  cuts the files back to what the committed batches refused; the (N+1)th stops the import as a bad
  line does without the option.`;

export function registerImport(program: Command): void {
  withStoreOptions(program.command('import').description('import rows from NDJSON (one row a line, in the POST shape); each batch is written atomically'))
    .requiredOption('--instance <name>', 'instance')
    .requiredOption('--table <name>', 'table')
    .option(
      '--batch <rows>',
      `rows per atomic store write (default: ${DEFAULT_IMPORT_BATCH} on the embedded store, or fewer once their lines reach ${DEFAULT_BATCH_BYTES / 1024 / 1024} MiB; ${DEFAULT_OBJECT_BATCH} on Bigtable)`,
      positiveInteger,
    )
    .option('--threads <n>', `threads parsing lines (default: the machine's cores, at most ${MAX_PARSE_THREADS})`, positiveInteger)
    .option('--max-bad-lines <n>', 'bad lines refused (to the reject file) before the import stops; 0: the first one stops it', nonNegativeInteger, 0)
    .option('--reject-file <path>', 'where refused lines go, their reasons in PATH.reasons (default: FILE.rejects; rowgate-import-<time>.rejects for -)')
    .option('--resume', 'continue an import that stopped, from the first line it did not commit (FILE.import-progress)')
    .argument('<file>', 'NDJSON file, or - for standard input')
    .addHelpText('after', CONTRACT)
    .action(async (file: string, flags: ImportFlags) => {
      if (flags.resume === true && file === '-') throw new CliError('--resume needs a FILE: standard input cannot be read again', EXIT_USAGE);
      if (flags.rejectFile !== undefined && flags.maxBadLines === 0) throw new CliError('--reject-file needs --max-bad-lines N (N above 0)', EXIT_USAGE);
      await withStore(flags, { create: false }, ({ store }) => importRows(store, file, flags));
    });
}

/** A batch handed to the store: its lines, rows and cells, and how to write it. */
interface Batch {
  readonly firstLine: number;
  readonly lastLine: number;
  readonly rows: number;
  readonly cells: number;
  /** Its lines refused (--max-bad-lines), appended to the reject files before it is handed to the store. */
  readonly rejects: readonly Reject[];
  /** The progress record once it is committed: committed with it (a BatchMarker) where the store can, and written to FILE.import-progress after. */
  readonly record: ImportProgress;
  readonly write: () => Promise<void>;
  /**
   * Written alone (nothing else in flight, the next batch only after it): Store.write can refuse a
   * batch (a counter overflow, a key over the store's limit), and no later batch may be written then.
   */
  readonly alone: boolean;
}

/** The outcome of a store write; never rejects, so no rejection goes unhandled while parsing on. */
type WriteOutcome = { readonly ok: true; readonly batch: Batch } | { readonly ok: false; readonly batch: Batch; readonly error: unknown };

/**
 * Batch writes started before the oldest is acknowledged. With 2, the next batch's transaction
 * runs while the previous one is flushed to disk (the main thread was idle 25% of the time waiting
 * for it): 1,000,000 rows x 5 cells at 123,000 and 126,000 cells/s against 109,000 with 1 and
 * 114,000 with 3 (same load). Each batch is still one transaction's part, acknowledged only once durable.
 */
const WRITES_AHEAD = 2;
/** Batches handed to each parsing thread beyond the one it parses: it never waits for its next. */
const QUEUED_PER_THREAD = 1;
/** Parsing threads at most: beyond 4 the writing thread (LMDB's one writer) bounds the import. */
const MAX_PARSE_THREADS = 4;
// Under the test runner this module is TypeScript source; the workers inherit its loader flags.
const WORKER_URL = new URL(import.meta.url.endsWith('.ts') ? './import-worker.ts' : './import-worker.js', import.meta.url);

/**
 * Lines a parsing thread takes at a time. A larger batch is parsed in parts on every thread, and
 * its parts' sorted rows merged into one key order as it is written (Store.writePacked). Parts
 * of 100,000: on 2 threads the last part keeps one of them busy alone for at most 0.4 s (4 us a
 * row), and merging 10 runs costs the writing thread about 0.2 us a row.
 */
export const PART_ROWS = 100_000;

/** Input lines handed to a parsing thread as a part of a batch, and its answer once it came. */
interface Part {
  readonly firstLine: number;
  readonly lastLine: number;
  readonly answer: Promise<FromImportWorker>;
}

async function importRows(store: Store, file: string, flags: ImportFlags): Promise<void> {
  const layout = await store.getLayout(flags.instance, flags.table);
  const schemas = await store.schemaTable(flags.instance);
  const input = inputSize(file);
  const started = performance.now();
  const progress = startProgress(
    input.size === undefined
      ? 'importing {rows} rows | {cells} cells | {rate} cells/s | {duration_formatted}'
      : 'importing |{bar}| {percentage}% | {rows} rows | {cells} cells | {rate} cells/s | ETA {eta_formatted}',
    input.size,
    { rows: 0, cells: 0, rate: 0 },
  );
  // A store that packs rows (the embedded store: its keys and values) gets batches packed on the parsing threads.
  const packing = store.packing;
  const threads = flags.threads ?? Math.max(1, Math.min(availableParallelism(), MAX_PARSE_THREADS));
  const tableName = `${flags.instance}/${flags.table}`;
  // Where an earlier run stopped (--resume), and the progress record this run keeps (a FILE only).
  // On a store that commits the record with each batch (Store.batchMarker) that record is where
  // the import stands: the file may be one batch behind it (a crash between the two).
  const markerKey = `${resolve(file)}\n${tableName}`;
  const stored = file !== '-' ? await store.batchMarker(markerKey) : undefined;
  const resumed: ImportProgress | undefined =
    flags.resume === true ? (stored !== undefined ? resumedFromMarker(stored, file, tableName) : readProgress(file, tableName)) : undefined;
  if (file !== '-' && resumed === undefined) {
    removeProgress(file);
    if (stored !== undefined) await store.clearBatchMarker(markerKey);
  }
  /** The marker as the last batch handed to the store leaves it (what the next batch expects). */
  let handedMarker = resumed === undefined ? undefined : stored;
  const maxBadLines = flags.maxBadLines;
  const rejectPath = maxBadLines > 0 ? (flags.rejectFile ?? resumed?.rejectFile ?? defaultRejectFile(file)) : undefined;
  // The earlier run's reject files go on when this run writes to the same ones (the record holds the path resolved).
  const sameRejects = resumed?.rejectFile !== undefined && rejectPath !== undefined && resolve(resumed.rejectFile) === resolve(rejectPath);
  const rejectFiles = rejectPath === undefined ? undefined : new RejectFiles(rejectPath, sameRejects ? resumed!.rejectLengths : undefined);
  const parsers = new Parsers(threads, { layout: layout.desc, maxRowKeyBytes: store.maxRowKeyBytes, packing, tolerant: maxBadLines > 0 }, schemas);
  const stream = file === '-' ? process.stdin : createReadStream(file, { highWaterMark: 256 * 1024 });
  if (file === '-' && process.stdin.isTTY) process.stderr.write('reading rows from standard input (end with Ctrl-D)\n');
  const bytesRead = (): number => ('bytesRead' in stream ? (stream.bytesRead as number) : 0);

  let committedRows = resumed?.rows ?? 0;
  let committedCells = resumed?.cells ?? 0;
  /** Rows and cells of the batches handed to the store (committed or being written). */
  let handedRows = committedRows;
  let handedCells = committedCells;
  /** Lines refused in committed batches (an earlier run's included), and in batches handed to the store. */
  let committedRefused = sameRejects ? resumed!.refused : 0;
  let handedRefused = committedRefused;
  /** Whether the progress record is kept (false once it could not be written). */
  let keepsProgress = file !== '-';
  /** Called once a batch is committed: the progress record (its refused lines were appended before it was handed over). */
  const recordCommitted = (batch: Batch): void => {
    committedRows += batch.rows;
    committedCells += batch.cells;
    committedRefused += batch.rejects.length;
    if (!keepsProgress) return;
    if (!writeProgress(file, batch.record)) {
      keepsProgress = false;
      process.stderr.write(`rowgate import: warning: cannot write ${progressPath(file)}: this import cannot be continued with --resume\n`);
    }
  };
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
      throw new CliError(
        `writing lines ${batch.firstLine}-${batch.lastLine} failed: ${why}\n${stoppedText(batch.firstLine, committedRows, committedCells)}${laterText}${resumeText(batch.firstLine)}`,
      );
    }
    recordCommitted(outcome.batch);
    progress.update(bytesRead(), { rows: committedRows, cells: committedCells, rate: rateText(committedCells, (performance.now() - started) / 1000) });
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

  /** Batches whose lines were all handed to the parsing threads, in input order; written in that order. */
  const batches: Part[][] = [];
  /** The parts of the batch being read. */
  let openBatch: Part[] = [];
  let openRows = 0;
  /** Answers of parts not in yet, oldest first: no more than the threads can hold are handed out. */
  const unanswered: Promise<FromImportWorker>[] = [];

  /** Writes the oldest batch once all its parts are parsed (or stops the import at its first bad line). */
  const writeOldest = async (): Promise<void> => {
    const parts = batches.shift()!;
    const answers = await Promise.all(parts.map((p) => p.answer));
    const firstLine = parts[0]!.firstLine;
    const lastLine = parts[parts.length - 1]!.lastLine;
    let rows = 0;
    let cells = 0;
    const rejects: Reject[] = [];
    for (const m of answers) {
      if (m.type === 'prepared') rows += m.lines;
      else if (m.type === 'batch') rows += m.rows.length;
      else if (m.type === 'bad-line') {
        await settle();
        throw new CliError(`line ${m.line}: ${m.message}\n${stoppedText(firstLine, committedRows, committedCells)}${resumeText(firstLine)}`);
      } else {
        await settle();
        throw new Error(m.type === 'failed' ? m.message : `unexpected message ${m.type}`);
      }
      cells += m.cells;
      rejects.push(...m.rejects);
    }
    if (handedRefused + rejects.length > maxBadLines && rejects.length > 0) {
      // The (N+1)th bad line stops the import as the first one does without --max-bad-lines.
      // (A resumed import may have refused more than a lower N given now: then its first.)
      const over = rejects[Math.max(0, maxBadLines - handedRefused)]!;
      await settle();
      throw new CliError(
        `line ${over.line}: ${over.reason}\nmore than ${maxBadLines} bad lines (--max-bad-lines ${maxBadLines}); ${refusedText()}\n` +
          `${stoppedText(firstLine, committedRows, committedCells)}${resumeText(firstLine)}`,
      );
    }
    handedRefused += rejects.length;
    handedRows += rows;
    handedCells += cells;
    // The refused lines go to the reject files (synced) before the batch is handed over: a crash
    // after its commit cannot lose them; one before it leaves them past the lengths the last
    // committed record holds, where --resume cuts the files.
    rejectFiles?.append(rejects);
    const record: ImportProgress = {
      input: resolve(file),
      table: tableName,
      nextLine: lastLine + 1,
      rows: handedRows,
      cells: handedCells,
      refused: handedRefused,
      ...(rejectFiles === undefined ? {} : { rejectFile: resolve(rejectFiles.path), rejectLengths: rejectFiles.lengths }),
    };
    const marker: BatchMarker | undefined = file !== '-' ? { key: markerKey, expected: handedMarker, value: JSON.stringify(record) } : undefined;
    if (marker !== undefined) handedMarker = marker.value;
    const written = answers.map((m) => (m.type === 'prepared' ? m.batch : (m as Extract<FromImportWorker, { type: 'batch' }>).rows));
    for (const part of written) {
      // Buffers arrive from a worker as plain Uint8Arrays: views, no copy.
      if (Array.isArray(part))
        for (const row of part as { rowKey: Uint8Array }[]) row.rowKey = Buffer.from(row.rowKey.buffer, row.rowKey.byteOffset, row.rowKey.byteLength);
    }
    const packed = answers.every((m) => m.type === 'prepared');
    await startWrite({
      firstLine,
      lastLine,
      rows,
      cells,
      rejects,
      record,
      write: () => store.writePacked(flags.instance, flags.table, written, marker),
      alone: !packed,
    });
  };

  const cutter = new LineCutter(resumed?.nextLine ?? 1);
  const batchRows = flags.batch ?? (packing !== undefined ? DEFAULT_IMPORT_BATCH : DEFAULT_OBJECT_BATCH);
  const batchBytes = flags.batch === undefined && packing !== undefined ? DEFAULT_BATCH_BYTES : Infinity;
  let openBytes = 0;
  let index = 0;
  /** Hands the first `n` lines held to a parsing thread as a part of the open batch, once one can take it. */
  const handOver = async (n: number): Promise<void> => {
    while (unanswered.length >= threads * (1 + QUEUED_PER_THREAD)) await unanswered.shift();
    const part = cutter.take(n);
    // Read before the part's buffers are handed over (transferred: empty here afterwards).
    const firstLine = part.lines[0]!;
    const lastLine = part.lines[n - 1]!;
    const partBytes = part.bytes.byteLength;
    const answer = parsers.parse({ type: 'lines', index, ...part });
    // The bar moves as parts are parsed, also while a large batch is not written yet.
    void answer.then(() =>
      progress.update(bytesRead(), { rows: committedRows, cells: committedCells, rate: rateText(committedCells, (performance.now() - started) / 1000) }),
    );
    unanswered.push(answer);
    openBatch.push({ firstLine, lastLine, answer });
    openRows += n;
    openBytes += partBytes;
    index++;
  };
  /** Hands over parts while a whole one is held (all that is held at the end of the input). */
  const handOverHeld = async (atEnd: boolean): Promise<void> => {
    for (;;) {
      const size = Math.min(PART_ROWS, batchRows - openRows);
      if (cutter.held < size && !(atEnd && cutter.held > 0)) return;
      await handOver(Math.min(size, cutter.held));
      if (openRows >= batchRows || openBytes >= batchBytes) await closeBatch();
    }
  };
  /** Ends the open batch; the one before it is handed to the writer first (at most one batch waits for its parts). */
  const closeBatch = async (): Promise<void> => {
    batches.push(openBatch);
    openBatch = [];
    openRows = 0;
    openBytes = 0;
    while (batches.length > 1) await writeOldest();
  };

  try {
    for await (const chunk of stream as AsyncIterable<Buffer>) {
      cutter.push(chunk);
      await handOverHeld(false);
    }
    cutter.end();
    await handOverHeld(true);
    if (openBatch.length > 0) await closeBatch();
    while (batches.length > 0) await writeOldest();
    await settle();
  } catch (e) {
    await Promise.all(inFlight);
    throw e;
  } finally {
    progress.stop();
    if (file !== '-') stream.destroy();
    await parsers.close();
    rejectFiles?.close();
  }
  if (file !== '-') {
    removeProgress(file);
    await store.clearBatchMarker(markerKey);
  }
  const seconds = (performance.now() - started) / 1000;
  // Rates of this run's rows; the counts include a resumed import's earlier runs.
  const rows = committedRows - (resumed?.rows ?? 0);
  const cells = committedCells - (resumed?.cells ?? 0);
  const resumedText = resumed === undefined ? '' : `; resumed at line ${resumed.nextLine} (${resumed.rows} rows, ${resumed.cells} cells before it)`;
  const refused = committedRefused === 0 ? '' : `; ${refusedText()}`;
  process.stdout.write(
    `imported ${rows} rows, ${cells} cells in ${seconds.toFixed(2)} s (${rateText(rows, seconds)} rows/s, ${rateText(cells, seconds)} cells/s)${resumedText}${refused}\n`,
  );

  /** How many lines were refused and where they are (the committed batches'). */
  function refusedText(): string {
    if (rejectFiles === undefined || committedRefused === 0) return 'no line was refused before it';
    return `refused ${committedRefused} ${committedRefused === 1 ? 'line' : 'lines'}, in ${rejectFiles.path} (reasons in ${reasonsPath(rejectFiles.path)})`;
  }
  /** How to go on after a stop, when the progress record says where. */
  function resumeText(from: number): string {
    if (!keepsProgress || committedRows === 0) return '';
    return `\nrun the same command with --resume to continue from line ${from} (${progressPath(file)} says where)`;
  }
}

/**
 * The parsing threads: a batch goes to the one with the fewest batches handed over; each answer
 * resolves its batch's promise. A thread that fails or exits fails every batch it holds.
 */
class Parsers {
  private readonly workers: { readonly worker: Worker; readonly pending: Map<number, (m: FromImportWorker) => void> }[] = [];
  private failure: Error | undefined;

  constructor(count: number, workerData: ImportWorkerData, schemas: SchemaTable) {
    for (let i = 0; i < count; i++) {
      const worker = new Worker(WORKER_URL, { workerData });
      const entry = { worker, pending: new Map<number, (m: FromImportWorker) => void>() };
      worker.on('message', (m: FromImportWorker) => {
        if (m.type === 'schema') {
          answerSchema(worker, schemas, m);
          return;
        }
        const resolve = entry.pending.get(m.index);
        entry.pending.delete(m.index);
        resolve?.(m);
      });
      const fail = (e: Error): void => {
        this.failure ??= e;
        for (const [index, resolve] of entry.pending) resolve({ type: 'failed', index, message: e.message });
        entry.pending.clear();
      };
      worker.on('error', fail);
      worker.on('exit', (code) => fail(new Error(`an import parsing thread stopped (exit code ${code})`)));
      this.workers.push(entry);
    }
  }

  parse(batch: LinesBatch): Promise<FromImportWorker> {
    if (this.failure !== undefined) return Promise.resolve({ type: 'failed', index: batch.index, message: this.failure.message });
    let least = this.workers[0]!;
    for (const w of this.workers) if (w.pending.size < least.pending.size) least = w;
    return new Promise((resolve) => {
      least.pending.set(batch.index, resolve);
      least.worker.postMessage(batch, [batch.bytes.buffer, batch.starts.buffer, batch.ends.buffer, batch.lines.buffer] as ArrayBuffer[]);
    });
  }

  async close(): Promise<void> {
    await Promise.all(this.workers.map((w) => w.worker.terminate()));
  }
}

/** Answers a schema-table look-up of a worker from the store (never rejects). */
function answerSchema(worker: Worker, schemas: SchemaTable, m: Extract<FromImportWorker, { type: 'schema' }>): void {
  const op = m.op === 'schemaOf' ? schemas.schemaOf(m.arg as number) : schemas.idOf(m.arg as string);
  op.then(
    (value) => worker.postMessage({ type: 'schema-answer', id: m.id, value } satisfies ToImportWorker),
    (e: unknown) =>
      worker.postMessage({
        type: 'schema-error',
        id: m.id,
        code: isRowgateError(e) ? e.code : undefined,
        message: e instanceof Error ? e.message : String(e),
      } satisfies ToImportWorker),
  );
}

/** What was committed when an import stops before `firstLine` (the first line of the batch not written). */
function stoppedText(firstLine: number, rows: number, cells: number): string {
  if (rows === 0) return 'nothing was imported';
  return `rows before line ${firstLine} were imported (${rows} rows, ${cells} cells); nothing from line ${firstLine} on was written`;
}

/** commander argument parser for a count that may be 0. */
function nonNegativeInteger(text: string): number {
  const n = /^[0-9]+$/.test(text) ? Number(text) : NaN;
  if (!Number.isSafeInteger(n)) throw new InvalidArgumentError('must be an integer, 0 or more');
  return n;
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
