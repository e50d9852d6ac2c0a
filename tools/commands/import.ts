/**
 * `rowgate import --instance I --table T FILE.ndjson|-`: one row a line in the revision 3 POST
 * shape ({"entityId": [...], "cells": {family: {qualifier: [{value, timestamp?, writer_schema?}]}}}),
 * read as a stream and written in batches of --batch rows, each batch one atomic store write.
 * Blank lines are skipped; CR LF line ends are accepted, so an export imports as it is.
 *
 * Every row of a batch is validated and encoded before the batch is written. A bad line stops the
 * import: the batches before it are committed (the message says up to which line), nothing of the
 * batch holding the bad line is written. One batch write may be outstanding while the next batch
 * is parsed (this overlaps only where the store's writes are asynchronous; LMDB commits
 * synchronously inside Store.write).
 */
import { createReadStream, statSync, type ReadStream } from 'node:fs';
import { createInterface } from 'node:readline';
import type { Command } from 'commander';
import { isRowgateError } from '../../lib/errors.js';
import { parseExactJson } from '../../lib/model/exact-json.js';
import { encodeRowInput, encodeRowInputCached, type RowInputContext } from '../../lib/model/row-input.js';
import type { RowWrite } from '../../lib/model/types.js';
import type { Store } from '../../lib/store/store.js';
import { CliError } from '../support/cli-error.js';
import { rateText, startProgress } from '../support/progress.js';
import { positiveInteger } from '../support/read-options.js';
import { withStore, withStoreOptions, type StoreFlags } from '../support/store-options.js';

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

/** A batch handed to the store: its lines, rows and cells. */
interface Batch {
  readonly firstLine: number;
  readonly lastLine: number;
  readonly rows: RowWrite[];
  readonly cells: number;
}

/** The outcome of a store write; never rejects, so no rejection goes unhandled while parsing on. */
type WriteOutcome = { readonly ok: true; readonly batch: Batch } | { readonly ok: false; readonly batch: Batch; readonly error: unknown };

async function importRows(store: Store, file: string, flags: ImportFlags): Promise<void> {
  const layout = await store.getLayout(flags.instance, flags.table);
  const ctx: RowInputContext = { layout, schemas: await store.schemaTable(flags.instance), maxRowKeyBytes: store.maxRowKeyBytes };
  const input = openInput(file);
  const started = performance.now();
  const progress = startProgress(
    input.size === undefined ? 'importing {rows} rows | {cells} cells | {rate} cells/s | {duration_formatted}' : 'importing |{bar}| {percentage}% | {rows} rows | {cells} cells | {rate} cells/s | ETA {eta_formatted}',
    input.size,
    { rows: 0, cells: 0, rate: 0 },
  );

  let committedRows = 0;
  let committedCells = 0;
  let inFlight: Promise<WriteOutcome> | undefined;
  /** Waits for the batch being written; on failure stops the import naming its lines. */
  const settle = async (): Promise<void> => {
    if (inFlight === undefined) return;
    const outcome = await inFlight;
    inFlight = undefined;
    if (!outcome.ok) {
      const { batch, error } = outcome;
      const why = isRowgateError(error) ? error.message : error instanceof Error ? error.message : String(error);
      throw new CliError(`writing lines ${batch.firstLine}-${batch.lastLine} failed: ${why}\n${stoppedText(batch.firstLine, committedRows, committedCells)}`);
    }
    committedRows += outcome.batch.rows.length;
    committedCells += outcome.batch.cells;
    progress.update(input.bytesRead(), { rows: committedRows, cells: committedCells, rate: rateText(committedCells, (performance.now() - started) / 1000) });
  };
  const startWrite = async (batch: Batch): Promise<void> => {
    await settle();
    inFlight = store.write(flags.instance, flags.table, batch.rows).then(
      (): WriteOutcome => ({ ok: true, batch }),
      (error: unknown): WriteOutcome => ({ ok: false, batch, error }),
    );
  };

  const lines = createInterface({ input: input.stream, crlfDelay: Infinity });
  let lineNo = 0;
  let rows: RowWrite[] = [];
  let cells = 0;
  let firstLine = 0;
  try {
    for await (const raw of lines) {
      lineNo++;
      // A byte order mark some editors put at the start of a file is not part of the first row.
      const line = lineNo === 1 && raw.charCodeAt(0) === 0xfeff ? raw.slice(1) : raw;
      if (isBlank(line)) continue;
      if (rows.length === 0) firstLine = lineNo;
      let row: RowWrite;
      try {
        const item = parseExactJson(line, 'the row');
        // Synchronous once the caches are warm: no promise per row or cell.
        ({ row } = encodeRowInputCached(item, ctx) ?? (await encodeRowInput(item, ctx)));
      } catch (e) {
        if (!isRowgateError(e)) throw e;
        await settle();
        throw new CliError(`line ${lineNo}: ${e.message}\n${stoppedText(firstLine, committedRows, committedCells)}`);
      }
      rows.push(row);
      cells += row.cells.length;
      if (rows.length >= flags.batch) {
        await startWrite({ firstLine, lastLine: lineNo, rows, cells });
        rows = [];
        cells = 0;
      }
    }
    if (rows.length > 0) await startWrite({ firstLine, lastLine: lineNo, rows, cells });
    await settle();
  } catch (e) {
    if (inFlight !== undefined) await inFlight;
    throw e;
  } finally {
    progress.stop();
    lines.close();
    input.stream.destroy();
  }
  const seconds = (performance.now() - started) / 1000;
  process.stdout.write(`imported ${committedRows} rows, ${committedCells} cells in ${seconds.toFixed(2)} s (${rateText(committedCells, seconds)} cells/s)\n`);
}

/** What was committed when an import stops before `firstLine` (the first line of the batch not written). */
function stoppedText(firstLine: number, rows: number, cells: number): string {
  if (rows === 0) return 'nothing was imported';
  return `rows before line ${firstLine} were imported (${rows} rows, ${cells} cells); nothing from line ${firstLine} on was written`;
}

function isBlank(line: string): boolean {
  for (let i = 0; i < line.length; i++) {
    const c = line.charCodeAt(i);
    if (c !== 0x20 && c !== 0x09 && c !== 0x0d) return false;
  }
  return true;
}

interface Input {
  readonly stream: NodeJS.ReadableStream & { destroy(): void };
  /** Bytes of a regular file; undefined for standard input and pipes. */
  readonly size: number | undefined;
  bytesRead(): number;
}

function openInput(file: string): Input {
  if (file === '-') {
    if (process.stdin.isTTY) process.stderr.write('reading rows from standard input (end with Ctrl-D)\n');
    return { stream: process.stdin, size: undefined, bytesRead: () => 0 };
  }
  let size: number | undefined;
  try {
    const stat = statSync(file);
    if (stat.isDirectory()) throw new CliError(`cannot import ${file}: it is a directory`);
    size = stat.isFile() ? stat.size : undefined;
  } catch (e) {
    if (e instanceof CliError) throw e;
    throw new CliError(`cannot read ${file}: ${(e as Error).message}`);
  }
  const stream: ReadStream = createReadStream(file, { highWaterMark: 256 * 1024 });
  return { stream, size, bytesRead: () => stream.bytesRead };
}
