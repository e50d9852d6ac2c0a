/**
 * Errors the command line reports itself: a message for the user (no stack trace) and the exit
 * status. Exit statuses: 0 success, 1 the command failed (bad data, missing table, I/O), 2 the
 * command could not start (bad flags, bad configuration, serve's startup failures).
 */
export const EXIT_FAILURE = 1;
export const EXIT_USAGE = 2;

export class CliError extends Error {
  constructor(
    message: string,
    readonly exitCode: number = EXIT_FAILURE,
  ) {
    super(message);
    this.name = 'CliError';
  }
}

/** The message of an error from the system (ENOENT, EADDRINUSE...): these need no stack trace. */
export function systemErrorMessage(e: unknown): string | undefined {
  if (e instanceof Error && typeof (e as NodeJS.ErrnoException).code === 'string' && (e as NodeJS.ErrnoException).syscall !== undefined) return e.message;
  return undefined;
}
