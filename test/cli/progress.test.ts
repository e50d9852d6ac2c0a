/**
 * The progress bar of import and export: drawn on stderr when stderr is a terminal (run under a
 * pseudo-terminal with util-linux `script`), absent when it is not, so pipes and logs stay clean.
 */
import { execFile } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import t, { type Test } from 'tap';
import { demoRow } from '../../lib/demo/demo-data.js';
import { USERS_LAYOUT_JSON } from '../../lib/model/layout/demo-layouts.js';
import { CLI, ensureBuilt, runCli, tempDir, writeFile } from './helpers.js';
import { LmdbStore } from '../../lib/store/lmdb/lmdb-store.js';
import { startGateway } from '../http/harness.js';

t.before(ensureBuilt);

const SCRIPT = ['/usr/bin/script', '/bin/script'].find((p) => existsSync(p));

/** Runs the CLI with stdin, stdout and stderr on a pseudo-terminal; resolves with what it printed. */
function onTerminal(args: readonly string[]): Promise<{ code: number; output: string }> {
  const command = [process.execPath, CLI, ...args].map((a) => `'${a.replace(/'/g, `'\\''`)}'`).join(' ');
  return new Promise((resolve) => {
    execFile(SCRIPT!, ['-qec', command, '/dev/null'], { maxBuffer: 64 * 1024 * 1024 }, (err, stdout) => {
      resolve({ code: err ? Number((err as { code?: number }).code ?? 1) : 0, output: stdout });
    });
  });
}

async function table(t: Test): Promise<{ dir: string; flags: string[]; rows: string }> {
  const dir = tempDir(t);
  const flags = ['--data', join(dir, 'data'), '--instance', 'it'];
  const r = await runCli(['create-table', ...flags, '--layout', writeFile(dir, 'users.json', USERS_LAYOUT_JSON)]);
  if (r.code !== 0) throw new Error(r.stderr);
  const lines: string[] = [];
  for (let uid = 1; uid <= 3000; uid++) lines.push(JSON.stringify(demoRow(uid)));
  return { dir, flags: [...flags, '--table', 'users'], rows: writeFile(dir, 'rows.ndjson', lines.join('\n') + '\n') };
}

t.test('import and export draw a progress bar on a terminal and none into a pipe', { skip: SCRIPT ? false : 'util-linux script not found' }, async (t) => {
  const { dir, flags, rows } = await table(t);
  const imported = await onTerminal(['import', ...flags, rows]);
  t.equal(imported.code, 0, 'import exits 0');
  t.match(imported.output, /importing \|[^|]*\| \d+%/, 'import on a terminal: a bar with its percentage of the input');
  t.match(imported.output, /imported 3000 rows/, 'and the summary line');

  const exported = await onTerminal(['export', ...flags, '--out', join(dir, 'out.json')]);
  t.equal(exported.code, 0, 'export exits 0');
  t.match(
    exported.output,
    /exporting \|[^|]*\| \d+% \| \d+\/3000 rows \| \d+ cells \| [\d.]+ MB \| \d+ rows\/s \| ETA/,
    'export on a terminal: rows against the estimated total, cells, bytes, rate and ETA',
  );
  t.match(exported.output, /exported 3000 rows/);

  // Over HTTP: the total comes from the gateway's split estimates.
  const gateway = await startGateway({}, { store: new LmdbStore({ path: join(dir, 'data') }) });
  t.teardown(() => gateway.close());
  const remote = await onTerminal([
    'export',
    '--url',
    gateway.base,
    '--instance',
    'it',
    '--table',
    'users',
    '--parallel',
    '2',
    '--out',
    join(dir, 'remote.json'),
  ]);
  t.equal(remote.code, 0, remote.output);
  t.match(
    remote.output,
    /exporting \|[^|]*\| \d+% \| \d+\/3000 rows \| \d+ cells \| [\d.]+ MB \| \d+ rows\/s \| ETA/,
    'export --url on a terminal: the same (cells counted in the documents), with the total from split estimates',
  );
  const localCells = /exported 3000 rows, (\d+) cells/.exec(exported.output)?.[1];
  t.ok(localCells, 'the local export counts its cells');
  t.match(remote.output, `exported 3000 rows, ${localCells} cells from`, 'the remote export counts the same cells');
  // Resumed with a limit: the bar counts the rows already written, so its total is the whole
  // export's limit (regression: it was the limit less those rows, and the bar passed 100%).
  const full = await runCli(['export', ...flags, '--limit', '2000', '--out', join(dir, 'first.json')]);
  t.equal(full.code, 0, full.stderr);
  const written = readFileSync(join(dir, 'first.json'), 'utf8').split('\r\n').slice(0, 500);
  writeFile(dir, 'resumed.json.partial', written.join('\r\n') + '\r\n');
  const resumed = await onTerminal(['export', ...flags, '--limit', '2000', '--resume', '--out', join(dir, 'resumed.json')]);
  t.equal(resumed.code, 0, resumed.output);
  t.match(resumed.output, /\d+\/2000 rows/, 'resumed with --limit 2000 after 500 rows: the bar counts to 2000');
  t.notMatch(resumed.output, /\/1500 rows/, 'not to the 1500 rows left');
  const remotePiped = await runCli(['export', '--url', gateway.base, '--instance', 'it', '--table', 'users', '--out', join(dir, 'remote2.json')]);
  t.notMatch(remotePiped.stderr, /\u001b\[|\r(?!\n)|%/, 'export --url into a pipe: no bar');
  t.match(remotePiped.stderr, /^exported 3000 rows[^\n]*\n$/, 'only the summary line');

  // The same commands into pipes (runCli): only the summary lines, no bar drawing.
  const piped = await runCli(['export', ...flags, '--out', join(dir, 'out2.json')]);
  t.equal(piped.code, 0, 'piped export exits 0');
  t.notMatch(piped.stderr, /\u001b\[|\r(?!\n)|%/, 'no cursor codes, carriage returns or percentages on a pipe');
  t.match(piped.stderr, /^exported 3000 rows/);
});
