/**
 * `rowgate export` once its flags are checked (tools/commands/export.ts): the rows from a local
 * store or a gateway into the target, the summary line, and what an export that stops says and
 * keeps. Loaded by the command's action, so its modules (the store, the formats, the HTTP client)
 * load after the command has started a scan thread (scan-pool.ts startScanThreadEarly).
 */
import { rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { terminatorOf } from '../../lib/rows/row-formats.js';
import type { AvroCodec } from '../../lib/rows/stages/avro.js';
import type { ParquetCodec } from '../../lib/rows/formats/parquet-codecs.js';
import { parseVersions } from '../../lib/model/read/read-request.js';
import { documentsToAvro } from './documents-to-rows.js';
import { CrLfToLf } from './crlf-to-lf.js';
import { rowKeyOfDocument } from '../../lib/rows/row-format.js';
import type { TableLayout } from '../../lib/model/types.js';
import type { Store } from '../../lib/store/store.js';
import { clipRanges, parseSplits, type SplitRange } from './export-ranges.js';
import { CliError, EXIT_USAGE } from './cli-error.js';
import { openTarget, type ExportTarget } from './export-file.js';
import { FORMAT_TITLE, WHOLE_FILE_FORMATS, type ExportFlags, type ResolvedFlags } from './export-formats.js';
import { ExportSpool, removeStaleSpools } from './export-spool.js';
import { writeInOrder } from './ordered-ranges.js';
import { OutputClosed } from './output.js';
import { rateText, startProgress, type Progress } from './progress.js';
import { dumpAvro, dumpRows, type DumpResult } from './row-dump.js';
import { selectionOf, type RowSelection } from './read-options.js';
import { TOKEN_ENV } from './command-options.js';
import { Gateway, RemoteError, remotely } from './remote.js';
import { keyAfter, readParams, remoteRows, type RemoteRange } from './remote-rows.js';
import { withStore } from './store-options.js';

/** The revision whose row documents an export writes (a gateway is read through its revision 3 interface). */
const EXPORT_REVISION = 3;

/** The Parquet export (parquet-wasm, export-parquet.ts), loaded only when asked for: importing parquet-wasm compiles its 5 MB of WebAssembly. */
const parquetExport = (): Promise<typeof import('./export-parquet.js')> => import('./export-parquet.js');

/** Exit status of an export stopped by Ctrl-C or SIGTERM (128 + SIGINT, as shells report it). */
const EXIT_INTERRUPTED = 130;
/** Split ranges fetched per --parallel connection: smaller ranges keep every connection busy to the end. */
const RANGES_PER_CONNECTION = 4;

class Interrupted extends Error {
  constructor(signal: string) {
    super(`interrupted (${signal})`);
    this.name = 'Interrupted';
  }
}

/** Runs an export whose flags the command has checked (tools/commands/export.ts). */
export async function runExport(flags: ResolvedFlags): Promise<void> {
  const parallel = flags.parallel ?? 1;
  const whole = WHOLE_FILE_FORMATS.has(flags.format);
  // The stage needs the layout before the export starts; the export then takes it from here.
  const layout = whole ? await layoutOf(flags) : undefined;
  // A local export frames its rows as the format asks (ndjson: LF) or encodes them as Avro from
  // their cells; a gateway sends the row stream (CR LF), which the export turns into LF (ndjson)
  // or reads back into rows for the Avro encoder (avro) as it writes.
  const stage =
    flags.url === undefined
      ? undefined
      : flags.format === 'ndjson'
        ? new CrLfToLf()
        : layout !== undefined
          ? flags.format === 'parquet'
            ? await (
                await parquetExport()
              ).documentsToParquet(layout, parseVersions(flags.versions), flags.codec as ParquetCodec | undefined, flags.rowGroupRows)
            : documentsToAvro(layout, flags.codec as AvroCodec | undefined)
          : undefined;
  const target = openTarget(flags.out, flags.resume === true, stage, !whole);
  const controller = new AbortController();
  const onSignal = (signal: NodeJS.Signals): void => controller.abort(new Interrupted(signal));
  process.once('SIGINT', onSignal);
  process.once('SIGTERM', onSignal);
  const started = performance.now();
  let written = 0;
  let progress: Progress | undefined;
  try {
    const result =
      flags.url !== undefined
        ? await exportRemote(
            flags,
            layout,
            parallel,
            target,
            controller.signal,
            (p) => (progress = p),
            (n) => (written = n),
          )
        : await withStore(flags, { create: false }, ({ store }) =>
            exportLocal(
              flags,
              layout,
              store,
              target,
              controller.signal,
              (p) => (progress = p),
              (n) => (written = n),
            ),
          );
    progress?.stop();
    await target.complete();
    const seconds = (performance.now() - started) / 1000;
    const before = target.resumed?.rows ?? 0;
    const resumed = before > 0 ? ` (resumed after ${before} rows already in ${target.partial})` : '';
    // What this run wrote (rows, cells, the output's bytes), as import reports what it read.
    const cells = result.cells === undefined ? '' : `, ${result.cells} cells`;
    const from = result.from === undefined ? '' : ` from ${result.from}`;
    const bytes = target.written?.() ?? result.bytes;
    process.stderr.write(
      `exported ${result.rows} rows${cells}${from} in ${seconds.toFixed(2)} s (${rateText(result.rows, seconds)} rows/s); wrote ${bytes} bytes${resumed}\n`,
    );
  } catch (e) {
    progress?.stop();
    if (e instanceof OutputClosed) return;
    await target.abandon();
    const interrupted = e instanceof Interrupted;
    const message = e instanceof Error && (interrupted || e instanceof RemoteError || e instanceof CliError) ? e.message : undefined;
    // Worth continuing: something was written (now or by an earlier run) or the user stopped it.
    // An Avro file is not cut at a row, so --resume cannot continue it: it goes, and the advice is to run again.
    if (target.partial !== undefined && whole && (interrupted || written > 0)) {
      rmSync(target.partial, { force: true });
      const hint = `stopped after ${written} rows; ${FORMAT_TITLE[flags.format]} export starts again from the first row; run again:\n  ${rerunCommand(false)}`;
      if (message === undefined) {
        process.stderr.write(`rowgate export: ${hint}\n`);
        throw e;
      }
      throw new CliError(`${message}\n${hint}`, exitCodeOf(e));
    }
    if (target.partial !== undefined && (interrupted || written > 0 || target.resumed !== undefined)) {
      const rows = written + (target.resumed?.rows ?? 0);
      const hint = `stopped after ${rows} rows, kept in ${target.partial}; continue with:\n  ${rerunCommand(true)}`;
      if (message === undefined) {
        process.stderr.write(`rowgate export: ${hint}\n`);
        throw e;
      }
      throw new CliError(`${message}\n${hint}`, exitCodeOf(e));
    }
    if (target.partial !== undefined) rmSync(target.partial, { force: true });
    if (interrupted || e instanceof RemoteError) throw new CliError(message!, exitCodeOf(e));
    throw e;
  } finally {
    process.off('SIGINT', onSignal);
    process.off('SIGTERM', onSignal);
  }
}

async function layoutOf(flags: ExportFlags): Promise<TableLayout> {
  if (flags.url !== undefined) return remotely(() => new Gateway(flags, { onRetry: retryNotice }).layout(flags.instance, flags.table));
  return withStore(flags, { create: false }, ({ store }) => store.getLayout(flags.instance, flags.table));
}

/** What an export says when a request made before any row failed and is tried again. */
function retryNotice(e: Error, waitMs: number): void {
  process.stderr.write(`rowgate export: ${e.message}; retrying in ${waitMs} ms\n`);
}

function exitCodeOf(e: unknown): number {
  if (e instanceof Interrupted) return EXIT_INTERRUPTED;
  return e instanceof CliError ? e.exitCode : 1;
}

interface ExportResult {
  readonly rows: number;
  /** Cells written (a remote export counts them in the documents it receives). */
  readonly cells?: number;
  /** Bytes handed to the output (the file's, unless a stage turns them into something else). */
  readonly bytes: number;
  /** Where the rows came from, for the summary (a remote export). */
  readonly from?: string;
}

type ProgressSink = (p: Progress) => void;

/** The selection after what an interrupted export already wrote: from the row after its last. */
function afterResume(selection: RowSelection, layout: TableLayout, target: ExportTarget): RowSelection {
  const point = target.resumed;
  if (point?.lastRow === undefined) return selection;
  if (selection.kind !== 'scan' || selection.request.filter !== undefined)
    throw new CliError('--resume continues exports of a key range (not --eid)', EXIT_USAGE);
  const start = keyAfter(rowKeyOfDocument(point.lastRow, layout.keyFormat, EXPORT_REVISION));
  const { limit } = selection.request;
  return { kind: 'scan', request: { ...selection.request, start, limit: limit < 0 ? -1 : Math.max(0, limit - point.rows) } };
}

/**
 * Export progress on a terminal: rows against the total when one is known (a --limit, or the
 * split estimates of a whole-table export) with an ETA, cells, bytes and rate.
 */
function exportProgress(total: number | undefined, already: number, withCells: boolean): Progress & { add(rows: number, bytes: number, cells?: number): void } {
  const started = performance.now();
  const cells = withCells ? ' | {cells} cells' : '';
  const bar = startProgress(
    total !== undefined
      ? `exporting |{bar}| {percentage}% | {value}/{total} rows${cells} | {mb} MB | {rate} rows/s | ETA {eta_formatted}`
      : `exporting {value} rows${cells} | {mb} MB | {rate} rows/s | {duration_formatted}`,
    total,
    { mb: '0.0', rate: 0, cells: 0 },
  );
  let rows = 0;
  let bytes = 0;
  let cellCount = 0;
  return {
    update: (done, payload) => bar.update(done, payload),
    stop: () => bar.stop(),
    add: (r, b, c = 0) => {
      rows += r;
      bytes += b;
      cellCount += c;
      bar.update(already + rows, { mb: (bytes / 1e6).toFixed(1), cells: cellCount, rate: rateText(rows, (performance.now() - started) / 1000) });
    },
  };
}

async function exportLocal(
  flags: ResolvedFlags,
  known: TableLayout | undefined,
  store: Store,
  target: ExportTarget,
  signal: AbortSignal,
  onProgress: ProgressSink,
  onWritten: (rows: number) => void,
): Promise<ExportResult> {
  const layout = known ?? (await store.getLayout(flags.instance, flags.table));
  const whole = selectionOf(layout, flags, store.maxRowKeyBytes);
  const selection = afterResume(whole, layout, target);
  const total = process.stderr.isTTY
    ? await progressTotal(whole, async () => (await store.splits(flags.instance, flags.table, 1))[0]?.estimatedRows)
    : undefined;
  const progress = exportProgress(total, target.resumed?.rows ?? 0, true);
  onProgress(progress);
  let rows = 0;
  let bytes = 0;
  let cells = 0;
  const args = {
    store,
    instance: flags.instance,
    table: flags.table,
    layout,
    selection,
    output: target.output,
    terminator: terminatorOf(flags.format === 'ndjson' ? 'ndjson' : 'json'),
    onBatch: (done: DumpResult) => {
      progress.add(done.rows - rows, done.bytes - bytes, done.cells - cells);
      rows = done.rows;
      bytes = done.bytes;
      cells = done.cells;
      onWritten(rows);
      if (signal.aborted) throw signal.reason;
    },
  };
  const result =
    flags.format === 'parquet'
      ? await (await parquetExport()).dumpParquet({ ...args, codec: flags.codec as ParquetCodec | undefined, rowGroupRows: flags.rowGroupRows })
      : flags.format === 'avro'
        ? await dumpAvro({ ...args, codec: flags.codec as AvroCodec | undefined })
        : await dumpRows(args);
  return { rows: result.rows, cells: result.cells, bytes: result.bytes };
}

/**
 * The progress bar's total: the rows of the whole export, what an interrupted one already wrote
 * included (the bar counts those too): its --limit, or the table's estimated rows for a whole-table
 * export; unknown otherwise.
 */
async function progressTotal(whole: RowSelection, tableRows: () => Promise<number | undefined>): Promise<number | undefined> {
  if (whole.kind !== 'scan' || whole.request.filter !== undefined) return undefined;
  if (whole.request.limit >= 0) return whole.request.limit;
  if (whole.request.start !== undefined || whole.request.end !== undefined) return undefined;
  return tableRows();
}

async function exportRemote(
  flags: ResolvedFlags,
  known: TableLayout | undefined,
  parallel: number,
  target: ExportTarget,
  signal: AbortSignal,
  onProgress: ProgressSink,
  onWritten: (rows: number) => void,
): Promise<ExportResult> {
  // The layout and splits requests come before any row: retried as rows are (remote.ts), told
  // on stderr, and ended by a Ctrl-C during a wait.
  const gateway = new Gateway(flags, { signal, onRetry: retryNotice });
  const tablePath = gateway.tablePath(flags.instance, flags.table);
  const layout = known ?? (await gateway.layout(flags.instance, flags.table));
  // The gateway checks key lengths against its own store; here only the forms are parsed.
  const whole = selectionOf(layout, flags, Number.MAX_SAFE_INTEGER);
  const selection = afterResume(whole, layout, target);
  // --cols and --versions always have a value (withScanOptions' defaults * and all).
  const params = readParams(flags);
  let ranges: RemoteRange[];
  let total: number | undefined;
  if (selection.kind === 'scan' && selection.request.filter === undefined) {
    const { start, end, limit } = selection.request;
    const wantSplits = (parallel > 1 && limit < 0) || (process.stderr.isTTY && limit < 0);
    const splits: SplitRange[] = wantSplits
      ? parseSplits(await gateway.json(`${tablePath}/splits?n=${parallel > 1 ? parallel * RANGES_PER_CONNECTION : 1}`))
      : [{}];
    const clipped = clipRanges(splits, start, end);
    total = await progressTotal(whole, async () =>
      splits.every((r) => r.estimatedRows !== undefined) ? splits.reduce((n, r) => n + r.estimatedRows!, 0) : undefined,
    );
    ranges = parallel > 1 && limit < 0 ? clipped.map((r) => ({ start: r.start, end: r.end, limit: -1, params })) : [{ start, end, limit, params }];
  } else {
    // One row, or a wildcard entity id: one request, as GET rows?eid answers it.
    const limit = selection.kind === 'row' ? selection.limit : selection.request.limit;
    ranges = [{ limit, params: { ...params, eid: flags.eid! } }];
  }
  const progress = exportProgress(total, target.resumed?.rows ?? 0, true);
  onProgress(progress);
  // Spools of earlier runs for this output that were killed outright (export-spool.ts); this
  // run's own is made only if a range is read ahead of its turn.
  const spoolParent = flags.out === undefined ? tmpdir() : dirname(flags.out);
  for (const stale of removeStaleSpools(spoolParent, flags.out)) {
    process.stderr.write(`rowgate export: removed the spool folder ${join(spoolParent, stale)} left by an export that did not finish\n`);
  }
  const spool = new ExportSpool(spoolParent, flags.out);
  let rows = 0;
  try {
    const result = await writeInOrder(
      ranges.map(
        (range) => () =>
          remoteRows(gateway, tablePath, layout, range, {
            signal,
            onRetry: (e, wait) => process.stderr.write(`rowgate export: ${e.message}; retrying from the next row in ${wait} ms\n`),
          }),
      ),
      target.output,
      {
        parallel,
        spoolDir: () => spool.folder(),
        signal,
        onChunk: (r, b, c) => {
          progress.add(r, b, c);
        },
        onWritten: (r) => {
          rows += r;
          onWritten(rows);
        },
      },
    );
    return { rows: result.rows, cells: result.cells, bytes: result.bytes, from: gateway.url };
  } finally {
    spool.remove();
  }
}

/** The command line again, with --resume when `resume` (and without a --token value: it is in ROWGATE_TOKEN or given again). */
function rerunCommand(resume: boolean): string {
  const args: string[] = [];
  const argv = process.argv.slice(2);
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i]!;
    if (a === '--token') {
      i++;
      continue;
    }
    if (a.startsWith('--token=') || a === '--resume') continue;
    args.push(/^[\w@%+=:,./-]+$/.test(a) ? a : `'${a.replace(/'/g, `'\\''`)}'`);
  }
  const token = argv.some((a) => a === '--token' || a.startsWith('--token=')) ? ` (with the token in ${TOKEN_ENV})` : '';
  return `tools/rowgate ${args.join(' ')}${resume ? ' --resume' : ''}${token}`;
}
