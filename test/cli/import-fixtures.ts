/** Shared by the import command tests: a `users` table (the demo layout) to import into, and what an export of it holds. */
import { join } from 'node:path';
import { demoRow } from '../../lib/demo/demo-data.js';
import { USERS_LAYOUT_JSON } from '../../lib/model/layout/demo-layouts.js';
import { runCli, tempDir, writeFile } from './helpers.js';

/** An empty `users` table in instance `it` of the data directory `dir/name`; the flags that name it. */
export async function usersTable(dir: string, name = 'data'): Promise<string[]> {
  const flags = ['--data', join(dir, name), '--instance', 'it'];
  const r = await runCli(['create-table', ...flags, '--layout', writeFile(dir, 'users.json', USERS_LAYOUT_JSON)]);
  if (r.code !== 0) throw new Error(r.stderr);
  return [...flags, '--table', 'users'];
}

/** A data directory in a new temporary folder with an empty `users` table; the folder and the common flags. */
export async function freshTable(t: { teardown(fn: () => void): void }): Promise<{ dir: string; flags: string[] }> {
  const dir = tempDir(t);
  return { dir, flags: await usersTable(dir) };
}

/** One import line: the demo row of `uid`. */
export const line = (uid: number): string => JSON.stringify(demoRow(uid));

/** The uids of the rows an export of the table finds, in order. */
export async function exportedUids(flags: string[]): Promise<number[]> {
  const r = await runCli(['export', ...flags, '--cols', 'info:email']);
  if (r.code !== 0) throw new Error(r.stderr);
  return r.stdout
    .split('\r\n')
    .filter((x) => x !== '')
    .map((doc) => (JSON.parse(doc) as { entityId: number[] }).entityId[0]!)
    .sort((a, b) => a - b);
}
