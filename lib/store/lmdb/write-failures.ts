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
 * Free bytes a data directory's device must keep beyond a write's own: a write that would leave
 * less is refused (RG_ERR_STORE_FULL) before LMDB sees it. Not only tidiness: when a page write
 * fails, lmdb-js 3.5.6 corrupts the process's heap. mdb.c's mdb_page_flush formats its "Attempting
 * to write page at position ..., buffer sizes ..." message with sprintf into malloc(100); the text
 * reaches ~133 bytes (three iovec lengths, two of them unset when fewer pages are written), and
 * glibc then aborts ("corrupted size vs. prev_size"). The fuzz test's full-disk run (seed 263456609)
 * aborted so in 4 of 8 runs before this check. A small write's commit writes a few pages (a leaf,
 * its branches, the free list): 1 MiB is hundreds of them.
 */
const ROOM_BYTES = 1024 * 1024;
/** A write's own bytes are counted this many times: LMDB writes new pages for what it changes (copy on write) and its B-tree's splits. */
const ROOM_FACTOR = 2;
/**
 * statfs costs ~1.6 us: with this much more room than a write needs, the last reading serves for
 * ROOM_READING_MS (the writes of that time cannot use it up), else the device is read again.
 */
const ROOM_SLACK_BYTES = 64 * 1024 * 1024;
const ROOM_READING_MS = 100;
const roomReadings = new Map<string, { free: number; at: number }>();

/** Refuses a write of about `bytes` bytes to the store at `path` when its device has not the room for it and ROOM_BYTES more. */
function checkRoom(path: string, bytes: number, doing: string): void {
  const need = ROOM_BYTES + ROOM_FACTOR * bytes;
  const now = performance.now();
  let reading = roomReadings.get(path);
  if (reading === undefined || now - reading.at > ROOM_READING_MS || reading.free < need + ROOM_SLACK_BYTES) {
    const free = freeBytes(path);
    if (free === undefined) return; // a device that cannot say: LMDB's own error decides
    reading = { free, at: now };
    roomReadings.set(path, reading);
  }
  if (reading.free < need)
    throw rgError(
      'RG_ERR_STORE_FULL',
      `${doing}: the data directory ${path} is out of space (${reading.free} bytes free on its device; a write needs ${need}: ${ROOM_BYTES} kept free${bytes > 0 ? ` and ${ROOM_FACTOR}x its ${bytes} bytes` : ''}); nothing of this request was written, and writes work again once space is freed`,
    );
}

/**
 * Runs a store write (a synchronous LMDB transaction, an asynchronous one, or both) and turns a
 * disk failure into its coded error; `bytes`: about how many bytes it writes (0 when unknown: the
 * room check asks ROOM_BYTES alone). The cause of an asynchronous commit failure is read here, in
 * the first reaction to the rejection, so that lmdb-js's cause promise is never left unhandled.
 */
export async function guardedWrite<T>(path: string, doing: string, write: () => T | Promise<T>, bytes = 0): Promise<T> {
  checkRoom(path, bytes, doing);
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
