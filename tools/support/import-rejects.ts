/**
 * The reject files of `rowgate import --max-bad-lines N`: the refused lines as they were read, one
 * a line (PATH), and beside them their reasons (PATH.reasons, `line 26: <reason>`, the n-th reason
 * for the n-th refused line). Two files, as Oracle's SQL*Loader (bad file and log) and pgloader
 * (reject data and reject log) keep them: the lines, once fixed, import as they are
 * (`rowgate import ... PATH`), and the reasons stay readable beside them.
 *
 * A batch's refused lines are appended (and synced) before the batch is handed to the store, so
 * a crash after its commit cannot lose them. Their lengths go into the import's progress record
 * (import-progress.ts) with the batch, and a resumed import first cuts the files back to the
 * lengths of the last committed batch: a batch refused lines of but never committed (a crash, a
 * stop) is not counted twice.
 */
import { closeSync, fstatSync, fsyncSync, ftruncateSync, openSync, unlinkSync, writeSync } from 'node:fs';
import { CliError } from './cli-error.js';

/** A line refused under --max-bad-lines: its number, the reason a strict import prints, its bytes as read. */
export interface Reject {
  readonly line: number;
  readonly reason: string;
  readonly text: Uint8Array;
}

/** The reject file's default: beside the input, or in the current directory named by the time for standard input. */
export function defaultRejectFile(input: string, now = new Date()): string {
  if (input !== '-') return `${input}.rejects`;
  return `rowgate-import-${now
    .toISOString()
    .replace(/[-:]/g, '')
    .replace(/\.\d+Z$/, 'Z')}.rejects`;
}

export function reasonsPath(rejectFile: string): string {
  return `${rejectFile}.reasons`;
}

/** Byte lengths of the two files (recorded with each committed batch). */
export interface RejectLengths {
  readonly lines: number;
  readonly reasons: number;
}

export class RejectFiles {
  private readonly fds: { lines: number; reasons: number };
  private written: { lines: number; reasons: number };

  /** Opens both files: empty (a new import), or cut back to `resumeAt` (a resumed one). */
  constructor(
    readonly path: string,
    resumeAt?: RejectLengths,
  ) {
    // Appending (the files may be gone: a run that refused nothing removes them).
    const flags = resumeAt === undefined ? 'w' : 'a';
    try {
      this.fds = { lines: openSync(path, flags), reasons: openSync(reasonsPath(path), flags) };
    } catch (e) {
      throw new CliError(`cannot write the reject file: ${(e as Error).message} (--reject-file names another)`);
    }
    this.written = { lines: resumeAt?.lines ?? 0, reasons: resumeAt?.reasons ?? 0 };
    for (const which of ['lines', 'reasons'] as const) {
      const size = fstatSync(this.fds[which]).size;
      if (size < this.written[which]) {
        throw new CliError(
          `${which === 'lines' ? path : reasonsPath(path)} holds ${size} bytes, fewer than the ${this.written[which]} the progress record counts: it was changed; run the import without --resume`,
        );
      }
      // What a batch that was never committed had appended goes.
      ftruncateSync(this.fds[which], this.written[which]);
    }
  }

  get lengths(): RejectLengths {
    return { ...this.written };
  }

  /** Appends refused lines (a batch's, in input order, before it is written) and syncs both files. */
  append(rejects: readonly Reject[]): void {
    if (rejects.length === 0) return;
    const lines = Buffer.concat(rejects.flatMap((r) => [r.text, NEWLINE]));
    // A reason is one line: the messages are, but a line break in one would shift every later reason.
    const reasons = Buffer.from(rejects.map((r) => `line ${r.line}: ${r.reason.replace(/[\r\n]+/g, ' ')}\n`).join(''));
    this.written.lines += writeAll(this.fds.lines, lines);
    this.written.reasons += writeAll(this.fds.reasons, reasons);
    fsyncSync(this.fds.lines);
    fsyncSync(this.fds.reasons);
  }

  /** Closes both files; removes them when they hold nothing (no line was refused). */
  close(): void {
    closeSync(this.fds.lines);
    closeSync(this.fds.reasons);
    if (this.written.lines === 0) {
      unlinkSync(this.path);
      unlinkSync(reasonsPath(this.path));
    }
  }
}

const NEWLINE = Buffer.from('\n');

/** Appends all of `bytes` (the files are opened to append, or empty). */
function writeAll(fd: number, bytes: Buffer): number {
  for (let done = 0; done < bytes.length;) done += writeSync(fd, bytes, done, bytes.length - done);
  return bytes.length;
}
