/**
 * What a failed LMDB write means for a client, and the one lmdb-js failure that would otherwise
 * end the process.
 *
 * A full disk is RG_ERR_STORE_FULL (507): ENOSPC, EDQUOT and LMDB's MDB_MAP_FULL say so directly;
 * a commit on a full tmpfs reports EIO instead (measured: lmdb-js 3.5.6, 20 MB tmpfs, errno 5 with
 * 0 bytes free), so an EIO is "full" when the data directory's file system has less than
 * FULL_BELOW_BYTES left, and any other EIO is the disk failing (503, retryable). The failed
 * transaction is rolled back whole and the environment stays usable: writes succeed again as soon
 * as space is freed, without a restart (test/store/lmdb-full-disk.test.ts).
 */
import { statfsSync } from 'node:fs';
import type { Database } from 'lmdb';
import { isLmdbWriteThreadError } from '../../deps/internals.js';
import { isRowgateError, rgError, type RowgateError } from '../../errors.js';

const EIO = 5;
const ENOSPC = 28;
const EDQUOT = 122;
/** lmdb.h: the environment's map size limit was reached. */
const MDB_MAP_FULL = -30792;
/** An EIO with less free space than this (a few LMDB commits' worth of pages) is a full disk. */
const FULL_BELOW_BYTES = 16 * 1024 * 1024;
const COMMIT_FAILED = 'Commit failed (see commitError for details)';

/** An lmdb-js asynchronous commit failure: the cause is a promise rejected with the LMDB error. */
interface CommitFailure extends Error {
  commitError: Promise<unknown>;
}

function isCommitFailure(e: unknown): e is CommitFailure {
  return e instanceof Error && e.message === COMMIT_FAILED && typeof (e as Partial<CommitFailure>).commitError?.then === 'function';
}

/** The LMDB error behind `e` (the commit's cause for an asynchronous commit failure). */
async function causeOf(e: unknown): Promise<unknown> {
  if (!isCommitFailure(e)) return e;
  return e.commitError.then(
    () => e,
    (cause: unknown) => cause,
  );
}

function errnoOf(e: unknown): number | string | undefined {
  return e !== null && typeof e === 'object' ? (e as { code?: number | string }).code : undefined;
}

function freeBytes(path: string): number | undefined {
  try {
    const s = statfsSync(path);
    return s.bavail * s.bsize;
  } catch {
    return undefined;
  }
}

/** `e` as the coded error a client sees when it is a disk failure of the store at `path`; otherwise `e` itself. */
export function diskFailure(e: unknown, path: string, doing: string): unknown {
  if (isRowgateError(e)) return e;
  const code = errnoOf(e);
  const message = e instanceof Error ? e.message : String(e);
  const full = (): RowgateError =>
    rgError(
      'RG_ERR_STORE_FULL',
      `${doing}: the data directory ${path} is out of space (${message}); nothing of this request was written, and writes work again once space is freed`,
      e,
    );
  if (code === ENOSPC || code === 'ENOSPC' || code === EDQUOT || code === 'EDQUOT' || code === MDB_MAP_FULL) return full();
  if (code === EIO || code === 'EIO') {
    const free = freeBytes(path);
    if (free !== undefined && free < FULL_BELOW_BYTES) return full();
    return rgError(
      'RG_ERR_STORE_UNAVAILABLE',
      `${doing}: the disk of the data directory ${path} reported an I/O error (${message}); nothing of this request was written`,
      e,
    );
  }
  return e;
}

/**
 * Runs a store write (a synchronous LMDB transaction, an asynchronous one, or both) and turns a
 * disk failure into its coded error. The cause of an asynchronous commit failure is read here, in
 * the first reaction to the rejection, so that lmdb-js's cause promise is never left unhandled.
 */
export async function guardedWrite<T>(path: string, doing: string, write: () => T | Promise<T>): Promise<T> {
  try {
    return await write();
  } catch (e) {
    throw diskFailure(await causeOf(e), path, doing);
  }
}

/**
 * An asynchronous LMDB transaction (lmdb-js commits it together with concurrent ones, off the main
 * thread). lmdb-js also opens an "event turn" batch for it, whose commit promise no caller holds
 * and which rejects when the commit fails: that promise exists once lmdb-js's own setImmediate has
 * run, so a handler is attached in the next one (else Node reports it unhandled, and handling it
 * later prints a PromiseRejectionHandledWarning).
 */
export function asyncTransaction(db: Database, apply: () => void, abortable = false): Promise<unknown> {
  // abortable: lmdb-js runs the callback in a child transaction, rolled back whole if it throws
  // (a counter overflow, a key over the store's limit), still committed with concurrent ones.
  const done = abortable ? db.childTransaction(apply) : db.transaction(apply);
  setImmediate(() => {
    db.committed.then(noop, noop);
  });
  return done;
}

function noop(): void {}

let guardInstalled = false;

/**
 * The safety net behind asyncTransaction: lmdb-js can reject internal promises of a failed commit
 * that no caller holds ("Commit failed", with the cause as a second rejected promise), and Node
 * ends the process on an unhandled rejection: a full disk once dropped every connection this way.
 * This guard ignores exactly those rejections (the write's own caller reports the failure) and
 * leaves every other unhandled rejection fatal, as Node's default is.
 */
export function ignoreOrphanedCommitFailures(): void {
  if (guardInstalled) return;
  guardInstalled = true;
  process.on('unhandledRejection', (reason: unknown, promise: Promise<unknown>) => {
    const orphan = isCommitFailure(reason) || (typeof errnoOf(reason) === 'number' && isLmdbWriteThreadError(reason));
    if (!orphan) throw reason;
    // Handled from now on: lmdb-js's close() waits on these promises again, and a rejection handled
    // after it was reported prints a PromiseRejectionHandledWarning.
    promise.catch(() => undefined);
    if (isCommitFailure(reason)) reason.commitError.catch(() => undefined);
  });
}

let quieted = false;

/**
 * lmdb-js also prints a failed asynchronous commit's LMDB error with console.error, stack and all,
 * from its write thread's callback ("Error: Input/output error at .../lmdb/write.js"), although the
 * write's caller reports it as a coded error. That raw stack is kept out of the gateway's log and
 * the CLI's output; anything else printed with console.error is printed as before.
 */
export function quietLmdbCommitErrors(): void {
  if (quieted) return;
  quieted = true;
  const print = console.error.bind(console);
  console.error = (...args: unknown[]): void => {
    const first = args[0];
    if (args.length === 1 && typeof errnoOf(first) === 'number' && isLmdbWriteThreadError(first)) return;
    print(...args);
  };
}
