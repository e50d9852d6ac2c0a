/**
 * The `rowgate` command line (docs/cli.md): one file per command under commands/.
 * Exit statuses: 0 success, 1 the command failed, 2 bad usage or configuration (and every
 * failure of `serve` before it accepts connections). Errors print as one message, without a
 * stack trace, except for unforeseen ones (bugs).
 */
import cluster from 'node:cluster';
import { Command, CommanderError } from 'commander';
import { unknownOptionBeforeMissing } from '../lib/deps/internals.js';
import { isRowgateError } from '../lib/errors.js';
import { REST_VERSION } from '../lib/version.js';
import { CliError, EXIT_FAILURE, EXIT_USAGE, systemErrorMessage } from './support/cli-error.js';
import { registerCreateTable } from './commands/create-table.js';
import { registerExport } from './commands/export.js';
import { registerGet } from './commands/get.js';
import { registerHashToken } from './commands/hash-token.js';
import { registerImport } from './commands/import.js';
import { registerLs } from './commands/ls.js';
import { registerScan } from './commands/scan.js';
import { registerServe } from './commands/serve.js';

export function buildProgram(): Command {
  const program = new Command('rowgate')
    .description('rowgate: a KijiREST gateway over a wide-column store')
    .version(REST_VERSION)
    .exitOverride()
    .showHelpAfterError('(add --help for usage)')
    .allowExcessArguments(false);
  registerServe(program);
  registerCreateTable(program);
  registerImport(program);
  registerExport(program);
  registerLs(program);
  registerGet(program);
  registerScan(program);
  registerHashToken(program);
  prefixUsageErrors(program, 'rowgate');
  for (const cmd of program.commands) {
    prefixUsageErrors(cmd, `rowgate ${cmd.name()}`);
    unknownOptionBeforeMissing(cmd);
  }
  return program;
}

/** commander's `error: ...` lines begin `rowgate <command>: ...`, as every other error (docs/cli.md). */
function prefixUsageErrors(cmd: Command, prefix: string): void {
  cmd.configureOutput({ outputError: (text, write) => write(text.replace(/^error: /, `${prefix}: `)) });
}

/** The message and exit status for an error a command threw. */
function describeFailure(e: unknown): { message: string | undefined; code: number } {
  // commander has already printed its message (or the help).
  if (e instanceof CommanderError) return { message: undefined, code: e.exitCode === 0 ? 0 : EXIT_USAGE };
  if (e instanceof CliError) return { message: e.message, code: e.exitCode };
  if (isRowgateError(e)) return { message: e.message, code: e.code === 'RG_ERR_BAD_CONFIG' ? EXIT_USAGE : EXIT_FAILURE };
  const system = systemErrorMessage(e);
  if (system !== undefined) return { message: system, code: EXIT_FAILURE };
  return { message: e instanceof Error ? (e.stack ?? e.message) : String(e), code: EXIT_FAILURE };
}

export async function main(argv: readonly string[]): Promise<number> {
  const program = buildProgram();
  let running = 'rowgate';
  program.hook('preAction', (_program, action) => {
    running = `rowgate ${action.name()}`;
  });
  try {
    await program.parseAsync([...argv]);
    return 0;
  } catch (e) {
    const { message, code } = describeFailure(e);
    if (message !== undefined)
      process.stderr.write(
        message
          .split('\n')
          .map((line) => `${running}: ${line}\n`)
          .join(''),
      );
    return code;
  }
}

main(process.argv).then((code) => {
  if (code === 0) return;
  process.exitCode = code;
  // A cluster worker's IPC channel keeps its event loop alive: a `serve --workers` worker that could
  // not start (its store unreachable) printed why and then waited, and so did the primary, which
  // stops the server when a worker exits before listening: for ever. Its message is written
  // (stderr is synchronous on a pipe or a file): exit.
  if (cluster.isWorker) process.exit(code);
});
