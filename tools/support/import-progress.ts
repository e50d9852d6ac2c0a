/**
 * The progress record of `rowgate import FILE`: FILE.import-progress, rewritten (a new file synced,
 * then renamed over the old) after each batch is committed, removed when the import ends well.
 * `--resume` reads it and starts at the line after the last committed batch, with the counts and
 * reject file lengths it holds. The file is written after the batch's commit, so a crash between
 * the two leaves it one batch behind; on the embedded store the same record is also committed in
 * the batch's own transaction (a Store BatchMarker), and --resume starts from that one, so no
 * committed batch is applied twice (its counter increments counted twice). On Bigtable, where no
 * transaction spans a batch, the file alone says where, and that batch is imported again.
 */
import { closeSync, fsyncSync, openSync, readFileSync, renameSync, rmSync, writeSync } from 'node:fs';
import { resolve } from 'node:path';
import { CliError } from './cli-error.js';
import type { RejectLengths } from './import-rejects.js';

export interface ImportProgress {
  /** The input's absolute path and the table. The input may change after nextLine (a bad line fixed). */
  readonly input: string;
  readonly table: string;
  /** The first line not committed: where --resume starts. */
  readonly nextLine: number;
  readonly rows: number;
  readonly cells: number;
  readonly refused: number;
  /** The reject file and its lengths after the batch (absent without --max-bad-lines). */
  readonly rejectFile?: string;
  readonly rejectLengths?: RejectLengths;
}

export function progressPath(input: string): string {
  return `${input}.import-progress`;
}

/** Writes the record (synced, then renamed into place); false when it cannot be written. */
export function writeProgress(input: string, p: ImportProgress): boolean {
  const path = progressPath(input);
  const tmp = `${path}.tmp`;
  try {
    const fd = openSync(tmp, 'w');
    try {
      writeSync(fd, `${JSON.stringify(p)}\n`);
      fsyncSync(fd);
    } finally {
      closeSync(fd);
    }
    renameSync(tmp, path);
    return true;
  } catch {
    return false;
  }
}

export function removeProgress(input: string): void {
  rmSync(progressPath(input), { force: true });
  rmSync(`${progressPath(input)}.tmp`, { force: true });
}

/** The record --resume continues from, checked against the input and table given now. */
export function readProgress(input: string, table: string): ImportProgress {
  const path = progressPath(input);
  let p: ImportProgress;
  try {
    p = JSON.parse(readFileSync(path, 'utf8')) as ImportProgress;
  } catch (e) {
    const missing = (e as NodeJS.ErrnoException).code === 'ENOENT';
    throw new CliError(
      missing
        ? `nothing to resume: ${path} does not exist (an import that ends well, or commits nothing, leaves none)`
        : `cannot read ${path}: ${(e as Error).message}`,
    );
  }
  if (p.input !== resolve(input) || p.table !== table)
    throw new CliError(`${path} is the progress of importing ${p.input} into ${p.table}, not of this import`);
  return p;
}

/** The record a store committed with the last batch (Store.batchMarker), checked as readProgress checks the file's. */
export function resumedFromMarker(value: string, input: string, table: string): ImportProgress {
  const p = JSON.parse(value) as ImportProgress;
  if (p.input !== resolve(input) || p.table !== table)
    throw new CliError(`the store's import record is of importing ${p.input} into ${p.table}, not of this import`);
  return p;
}
