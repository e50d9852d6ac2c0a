/**
 * Where an export writes: standard output, or `--out FILE` through `FILE.partial`, renamed to FILE
 * once complete (a failed or interrupted export never leaves a truncated FILE); a device or a pipe
 * given as FILE is written in place. FILE.partial is
 * kept when an export stops early, so `--resume` can continue it: the torn last line, if any, is
 * cut off, and the export goes on after the last complete row.
 */
import { once } from 'node:events';
import type { Duplex } from 'node:stream';
import { createWriteStream, existsSync, ftruncateSync, fstatSync, openSync, readSync, renameSync, statSync } from 'node:fs';
import { CliError, EXIT_USAGE } from './cli-error.js';
import { Output } from './output.js';

export interface ResumePoint {
  /** Complete rows already in the file. */
  readonly rows: number;
  /** The last complete row's document (no line end); undefined for an empty file. */
  readonly lastRow?: Buffer;
  /** Bytes of the file kept. */
  readonly bytes: number;
}

export interface ExportTarget {
  readonly output: Output;
  /** FILE.partial, or undefined for standard output. */
  readonly partial?: string;
  /** What an earlier run left, when resuming. */
  readonly resumed?: ResumePoint;
  /** Everything was written: FILE.partial becomes FILE. */
  complete(): Promise<void>;
  /** Stops writing, keeping what was written (for --resume). */
  abandon(): Promise<void>;
  /** After complete(): the bytes this run wrote to FILE or through the stage; undefined when not counted here. */
  written?(): number;
}

const BLOCK = 1 << 20;
const LF = 0x0a;

export function partialPath(out: string): string {
  return `${out}.partial`;
}

/**
 * Opens the target; with a `stage` (a format other than json, lib/rows/row-formats.ts) rows are
 * written into the stage and it writes the file.
 */
/** `resumable`: false for a format whose file cannot be continued at a row (Avro's blocks). */
export function openTarget(out: string | undefined, resume: boolean, stage?: Duplex, resumable = true): ExportTarget {
  if (out === undefined) {
    if (resume) throw new CliError('--resume needs --out FILE (standard output cannot be continued)', EXIT_USAGE);
    if (stage === undefined) {
      const output = new Output(process.stdout, true);
      return { output, complete: () => output.flush(), abandon: async () => undefined };
    }
    stage.pipe(process.stdout, { end: false });
    let staged = 0;
    stage.on('data', (b: Buffer) => (staged += b.length));
    const output = new Output(stage);
    const ended = new Promise<void>((resolve) => stage.on('end', resolve));
    return {
      output,
      complete: async () => {
        await output.end();
        await ended;
        await new Output(process.stdout).flush();
      },
      abandon: async () => undefined,
      written: () => staged,
    };
  }
  const existing = statSync(out, { throwIfNoEntry: false });
  if (existing?.isDirectory()) throw new CliError(`--out ${out} is a directory: give a file's path`, EXIT_USAGE);
  if (existing !== undefined && !existing.isFile()) return inPlaceTarget(out, resume, stage);
  const partial = partialPath(out);
  let fd: number;
  let resumed: ResumePoint | undefined;
  if (existsSync(partial)) {
    if (!resumable)
      throw new CliError(
        `${partial} exists: an earlier export to ${out} was interrupted; an Avro file cannot be continued: delete it and run the export again`,
      );
    if (!resume) throw new CliError(`${partial} exists: an earlier export to ${out} was interrupted; continue it with --resume, or delete it to start again`);
    fd = openSync(partial, 'r+');
    resumed = resumePoint(fd);
    ftruncateSync(fd, resumed.bytes);
  } else {
    if (resume && existsSync(out)) throw new CliError(`${out} is already complete (no ${partial} to resume)`);
    fd = openOut(out, partial);
  }
  const stream = createWriteStream(partial, { fd, start: resumed?.bytes ?? 0, flags: 'r+' });
  stage?.pipe(stream);
  const output = stage === undefined ? new Output(stream, true) : new Output(stage);
  return {
    output,
    partial,
    resumed,
    complete: async () => {
      await output.end();
      if (stage !== undefined && !stream.writableFinished) await once(stream, 'finish');
      renameSync(partial, out);
    },
    // The file's bytes (what a stage made of the rows: Avro, LF) less those an earlier run wrote.
    written: () => statSync(out).size - (resumed?.bytes ?? 0),
    abandon: async () => {
      try {
        await output.end();
      } catch {
        stream.destroy();
      }
    },
  };
}

/**
 * `--out` naming a device or a pipe (/dev/null, a FIFO, /dev/stdout): written in place. Through
 * FILE.partial and a rename, the finished export would replace the device node with a regular file
 * (`--out /dev/null` run as root did), and a pipe's reader would read nothing.
 */
function inPlaceTarget(out: string, resume: boolean, stage: Duplex | undefined): ExportTarget {
  if (resume) throw new CliError(`--resume continues a regular file; ${out} is a device or a pipe, written in place`, EXIT_USAGE);
  let fd: number;
  try {
    fd = openSync(out, 'w');
  } catch (e) {
    throw new CliError(`cannot write --out ${out}: ${(e as Error).message.split(', ')[0]}`);
  }
  const stream = createWriteStream(out, { fd });
  stage?.pipe(stream);
  const output = stage === undefined ? new Output(stream, true) : new Output(stage);
  return {
    output,
    complete: async () => {
      await output.end();
      if (!stream.writableFinished) await once(stream, 'finish');
    },
    written: () => stream.bytesWritten,
    abandon: async () => {
      try {
        await output.end();
      } catch {
        stream.destroy();
      }
    },
  };
}

/**
 * The complete rows of an interrupted export: everything up to its last line end. A line is a
 * row whatever its end (CR LF or LF); what follows the last LF is a torn row, cut off.
 */
export function resumePoint(fd: number): ResumePoint {
  const size = fstatSync(fd).size;
  const buf = Buffer.alloc(BLOCK);
  // The last LF, reading backwards a block at a time.
  let end = -1;
  for (let pos = size; pos > 0 && end < 0;) {
    const from = Math.max(0, pos - BLOCK);
    const n = readSync(fd, buf, 0, pos - from, from);
    const at = buf.subarray(0, n).lastIndexOf(LF);
    if (at >= 0) end = from + at;
    pos = from;
  }
  if (end < 0) return { rows: 0, bytes: 0 };
  const bytes = end + 1;
  // Rows: the line ends in the kept part.
  let rows = 0;
  for (let pos = 0; pos < bytes;) {
    const n = readSync(fd, buf, 0, Math.min(BLOCK, bytes - pos), pos);
    const block = buf.subarray(0, n);
    for (let i = block.indexOf(LF); i >= 0; i = block.indexOf(LF, i + 1)) rows++;
    pos += n;
  }
  // The last row: back from its line end to the previous one (a row may span blocks).
  const lastLine: Buffer[] = [];
  for (let pos = end; pos > 0;) {
    const from = Math.max(0, pos - BLOCK);
    const n = readSync(fd, buf, 0, pos - from, from);
    const at = buf.subarray(0, n).lastIndexOf(LF);
    if (at >= 0) {
      lastLine.unshift(Buffer.from(buf.subarray(at + 1, n)));
      break;
    }
    lastLine.unshift(Buffer.from(buf.subarray(0, n)));
    pos = from;
  }
  let lastRow = Buffer.concat(lastLine);
  if (lastRow[lastRow.length - 1] === 0x0d) lastRow = lastRow.subarray(0, -1);
  return { rows, lastRow, bytes };
}

/**
 * Opens the temporary file `--out FILE` is written to, before anything is read; a failure names
 * FILE, the path the user gave (the system's message named FILE.partial).
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
