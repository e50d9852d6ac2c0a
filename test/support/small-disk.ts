/**
 * A real small disk for full-disk tests: a tmpfs mounted in a temporary directory (CI runs as
 * root; elsewhere tests skip, saying why), and a ballast file that fills it.
 */
import { spawnSync } from 'node:child_process';
import { closeSync, mkdirSync, mkdtempSync, openSync, rmSync, writeSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/** Why a tmpfs cannot be mounted here (tests skip saying so), or false when it can. */
export const CANNOT_MOUNT: string | false = ((): string | false => {
  const probe = mkdtempSync(join(tmpdir(), 'rowgate-mount-probe-'));
  try {
    const r = spawnSync('mount', ['-t', 'tmpfs', '-o', 'size=1m', 'tmpfs', probe], { encoding: 'utf8' });
    if (r.status !== 0) return `cannot mount a tmpfs here (needs root, as CI runs): ${(r.stderr || r.error?.message || '').trim()}`;
    spawnSync('umount', [probe]);
    return false;
  } finally {
    rmSync(probe, { recursive: true, force: true });
  }
})();

/** A fresh tmpfs of `mb` MB in a temporary directory; unmounted, then removed, at teardown. */
export function smallDisk(t: { teardown(fn: () => void): void }, mb: number): string {
  const dir = mkdtempSync(join(tmpdir(), 'rowgate-full-'));
  const mount = join(dir, 'disk');
  mkdirSync(mount);
  const r = spawnSync('mount', ['-t', 'tmpfs', '-o', `size=${mb}m`, 'tmpfs', mount], { encoding: 'utf8' });
  if (r.status !== 0) throw new Error(`mount failed: ${r.stderr}`);
  t.teardown(() => {
    spawnSync('umount', ['-l', mount]);
    rmSync(dir, { recursive: true, force: true });
  });
  return mount;
}

/** Fills the file system at `dir` with a ballast file until about `leave` bytes are free (0: full); returns its path. */
export function ballast(dir: string, leave: number): string {
  const path = join(dir, 'ballast');
  const df = spawnSync('df', ['-B1', '--output=avail', dir], { encoding: 'utf8' });
  let room = Number(df.stdout.trim().split('\n')[1]) - leave;
  const fd = openSync(path, 'w');
  const block = Buffer.alloc(64 * 1024);
  try {
    while (room > 0) room -= writeSync(fd, block, 0, Math.min(block.length, room));
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code !== 'ENOSPC') throw e;
  } finally {
    closeSync(fd);
  }
  return path;
}
