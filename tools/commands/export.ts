/**
 * `rowgate export --instance I --table T [--out FILE]`: the table (or the selected rows: a key
 * range, one entity id or a wildcard one; columns, versions and time range) in the row stream format: each row one compact revision 3 row JSON
 * document followed by CR LF, byte for byte what GET rows returns for the same selection. All
 * rows and all versions unless limited. Written with backpressure; a file is written under a
 * temporary name and renamed when complete, so a failed export never leaves a truncated FILE.
 */
import { createWriteStream, openSync, renameSync, rmSync } from 'node:fs';
import type { Command } from 'commander';
import { ROW_TERMINATOR } from '../../lib/http/row-format.js';
import { CliError } from '../support/cli-error.js';
import { Output, OutputClosed } from '../support/output.js';
import { rateText, startProgress } from '../support/progress.js';
import { dumpRows } from '../support/row-dump.js';
import { selectionOf, withScanOptions, type ScanFlags } from '../support/read-options.js';
import { withStore, withStoreOptions, type StoreFlags } from '../support/store-options.js';

interface ExportFlags extends StoreFlags, ScanFlags {
  readonly instance: string;
  readonly table: string;
  readonly out?: string;
}

export function registerExport(program: Command): void {
  const cmd = withStoreOptions(program.command('export').description('write rows in the row stream format (revision 3 JSON + CR LF per row)'))
    .requiredOption('--instance <name>', 'instance')
    .requiredOption('--table <name>', 'table')
    .option('--out <file>', 'write to FILE instead of standard output');
  withScanOptions(cmd, '-1', 'all').action(async (flags: ExportFlags) => {
    await withStore(flags, { create: false }, async ({ store }) => {
      const layout = await store.getLayout(flags.instance, flags.table);
      const selection = selectionOf(layout, flags, store.maxRowKeyBytes);
      const limit = selection.kind === 'scan' ? selection.request.limit : Math.min(selection.limit, 1);
      const partial = flags.out === undefined ? undefined : `${flags.out}.partial-${process.pid}`;
      const stream = partial === undefined ? process.stdout : createWriteStream(partial, { fd: openOut(flags.out!, partial) });
      const output = new Output(stream);
      const started = performance.now();
      const progress = startProgress(
        limit >= 0 ? 'exporting |{bar}| {percentage}% | {value}/{total} rows | {cells} cells | ETA {eta_formatted}' : 'exporting {value} rows | {cells} cells | {rate} rows/s | {duration_formatted}',
        limit >= 0 ? limit : undefined,
        { cells: 0, rate: 0 },
      );
      let result;
      try {
        result = await dumpRows({
          store,
          instance: flags.instance,
          table: flags.table,
          layout,
          selection,
          output,
          terminator: ROW_TERMINATOR,
          onBatch: ({ rows, cells }) => progress.update(rows, { cells, rate: rateText(rows, (performance.now() - started) / 1000) }),
        });
        if (partial === undefined) await output.flush();
        else await output.end();
      } catch (e) {
        progress.stop();
        if (partial !== undefined) {
          stream.destroy();
          rmSync(partial, { force: true });
        }
        if (e instanceof OutputClosed) return;
        throw e;
      }
      progress.stop();
      if (partial !== undefined) renameSync(partial, flags.out!);
      const seconds = (performance.now() - started) / 1000;
      process.stderr.write(`exported ${result.rows} rows, ${result.cells} cells in ${seconds.toFixed(2)} s (${rateText(result.rows, seconds)} rows/s)\n`);
    });
  });
}

/**
 * Opens the temporary file `--out FILE` is written to, before anything is read; a failure names
 * FILE, the path the user gave (the system's message named FILE.partial-<pid>).
 */
function openOut(out: string, partial: string): number {
  try {
    return openSync(partial, 'w');
  } catch (e) {
    const err = e as NodeJS.ErrnoException;
    if (typeof err.code !== 'string') throw e;
    // "ENOENT: no such file or directory, open '<partial>'": the reason, without the temporary path.
    throw new CliError(`cannot write --out ${out}: ${err.message.split(', ')[0]}`);
  }
}
