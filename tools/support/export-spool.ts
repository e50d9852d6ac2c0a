/**
 * The spool folder of `export --url --parallel`, where ranges read ahead of their turn wait
 * (ordered-ranges.ts): beside the output (its file system, not a small /tmp), or in the temporary
 * directory for standard output. Made only when a range first needs it, removed when the export
 * ends. A run killed outright (SIGKILL, a crash, a power cut) cannot remove it; its name says
 * whose it was, so a later run for the same output removes the ones it can prove are stale:
 *
 *   .rowgate-export-<output file name>@<host>-<pid>-<6 random characters>
 *
 * Stale: the same output name, made on this host, by a process that no longer exists. A folder
 * of another output, another host (a shared file system) or a live process is never touched.
 */
import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { hostname } from 'node:os';
import { basename, join } from 'node:path';

const PREFIX = '.rowgate-export-';
/** Output names are cut to this many characters in folder names (a file name has at most 255 bytes). */
const NAME_CHARS = 100;
const NAMED = /^\.rowgate-export-(.*)@([^@]*)-(\d+)-[A-Za-z0-9]{6}$/;

/** The output's part of a spool folder's name: its file name, or "-" for standard output. */
function outputName(out: string | undefined): string {
  return (out === undefined ? '-' : basename(out)).slice(0, NAME_CHARS);
}

/** Whether process `pid` exists (EPERM: it does, as another user's). */
function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (e) {
    return (e as NodeJS.ErrnoException).code !== 'ESRCH';
  }
}

/** Removes the stale spool folders of the output in `parent` (see above); returns the names removed. */
export function removeStaleSpools(parent: string, out: string | undefined): string[] {
  const name = outputName(out);
  const host = hostname();
  const removed: string[] = [];
  let entries: string[];
  try {
    entries = readdirSync(parent);
  } catch {
    return removed; // no folder yet: the export names the problem when it writes there
  }
  for (const entry of entries) {
    if (!entry.startsWith(PREFIX)) continue;
    const m = NAMED.exec(entry);
    if (m === null || m[1] !== name || m[2] !== host) continue;
    const pid = Number(m[3]);
    if (pid === process.pid || alive(pid)) continue;
    rmSync(join(parent, entry), { recursive: true, force: true });
    removed.push(entry);
  }
  return removed;
}

export class ExportSpool {
  private dir: string | undefined;

  /** `parent`: where the folder goes; `out`: the export's --out (undefined: standard output). */
  constructor(
    private readonly parent: string,
    private readonly out: string | undefined,
  ) {}

  /** The folder, made on the first call. */
  folder(): string {
    this.dir ??= mkdtempSync(join(this.parent, `${PREFIX}${outputName(this.out)}@${hostname()}-${process.pid}-`));
    return this.dir;
  }

  remove(): void {
    if (this.dir !== undefined) rmSync(this.dir, { recursive: true, force: true });
    this.dir = undefined;
  }
}
