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

/**
 * Each command's module, loaded only for the command that runs (or all of them, in order, for
 * help, a version or an unknown command): the eight together took 234 ms to load, one 70-180 ms,
 * and every call of the command line paid for all eight.
 */
const COMMANDS: readonly [string, () => Promise<(program: Command) => void>][] = [
  ['serve', async () => (await import('./commands/serve.js')).registerServe],
  ['create-table', async () => (await import('./commands/create-table.js')).registerCreateTable],
  ['import', async () => (await import('./commands/import.js')).registerImport],
  ['export', async () => (await import('./commands/export.js')).registerExport],
  ['ls', async () => (await import('./commands/ls.js')).registerLs],
  ['get', async () => (await import('./commands/get.js')).registerGet],
  ['scan', async () => (await import('./commands/scan.js')).registerScan],
  ['hash-token', async () => (await import('./commands/hash-token.js')).registerHashToken],
];

/** The program, with the command `argv` names (node, script, then the arguments), or every command when it names none it knows. */
export async function buildProgram(argv: readonly string[]): Promise<Command> {
  const program = new Command('rowgate')
    .description('rowgate: a KijiREST gateway over a wide-column store')
    .version(REST_VERSION)
    .exitOverride()
    .showHelpAfterError('(add --help for usage)')
    .allowExcessArguments(false);
  // The program's own options take no value, so the first argument that is no option names the command.
  const named = argv.slice(2).find((a) => !a.startsWith('-'));
  const only = COMMANDS.filter(([name]) => name === named);
  for (const [, load] of only.length > 0 ? only : COMMANDS) (await load())(program);
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
  const program = await buildProgram(argv);
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
