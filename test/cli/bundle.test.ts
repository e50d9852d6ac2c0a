/**
 * tools/rowgate runs the bundle of the command line (tools/bundle.ts, dist/bundle/): its entry and
 * both worker threads' entries are there, every worker the bundle's code starts is a file beside it
 * (scan-pool.ts and import.ts start theirs beside their own module, which in the bundle is a file of
 * dist/bundle/), and an export large enough for the scan threads runs from it with every row; one
 * that starts a scan thread early and does not use it still ends.
 */
import { existsSync, readdirSync, readFileSync, truncateSync } from 'node:fs';
import { join } from 'node:path';
import t from 'tap';
import { parquetMetadata } from 'hyparquet';
import { PARALLEL_MIN_BYTES } from '../../lib/store/lmdb/scan-pool.js';
import { typedRows, typedStore } from '../support/typed-table.js';
import { ensureBuilt, ROOT, runCli, tempDir } from './helpers.js';

t.before(ensureBuilt);

const BUNDLE = join(ROOT, 'dist', 'bundle');
/** Rows of the typed table that make it large enough for the scan threads (8 parts on two of them). */
const ROWS = 20_000;

t.test('the bundle holds the command line and both workers, and each worker its code starts is a file beside it', async (t) => {
  for (const entry of ['rowgate-cli.js', 'scan-worker.js', 'import-worker.js']) t.ok(existsSync(join(BUNDLE, entry)), `dist/bundle/${entry}`);
  t.match(readFileSync(join(ROOT, 'tools', 'rowgate'), 'utf8'), /import\('\.\.\/dist\/bundle\/rowgate-cli\.js'\)/, 'tools/rowgate loads the bundle');
  // `new URL(import.meta.url.endsWith(".ts") ? "./scan-worker.ts" : "./scan-worker.js", import.meta.url)`, as esbuild writes it.
  const started = new Set<string>();
  for (const file of readdirSync(BUNDLE).filter((f) => f.endsWith('.js'))) {
    for (const m of readFileSync(join(BUNDLE, file), 'utf8').matchAll(/new URL\([^;]*?"\.\/([\w-]+\.js)", import\.meta\.url\)/g)) started.add(m[1]!);
  }
  t.same([...started].sort(), ['import-worker.js', 'scan-worker.js'], 'the workers the bundle starts');
  for (const worker of started) t.ok(existsSync(join(BUNDLE, worker)), `${worker} is beside the code that starts it`);
});

t.test('an export large enough for the scan threads runs from the bundle, with every row', async (t) => {
  // (The import's worker threads run from it in import.test's --threads runs.)
  const dir = tempDir(t);
  const data = join(dir, 'data');
  await typedStore(data, typedRows(ROWS));
  const out = join(dir, 'typed.parquet');
  const r = await runCli(['export', '--data', data, '--instance', 'default', '--table', 'typed', '--out', out]);
  t.equal(r.code, 0, r.stderr);
  const file = readFileSync(out);
  t.equal(Number(parquetMetadata(file.buffer.slice(file.byteOffset, file.byteOffset + file.length) as ArrayBuffer).num_rows), ROWS, 'every row');
});

t.test('an export that starts a scan thread early and then scans on its own thread ends, with every row', async (t) => {
  // A data file of the parallel scan size with a table below it: the command starts a thread
  // (scan-pool.ts startScanThreadEarly) that no pool takes, and must still end.
  const dir = tempDir(t);
  const data = join(dir, 'data');
  await typedStore(data, typedRows(250));
  truncateSync(join(data, 'data.mdb'), PARALLEL_MIN_BYTES);
  for (const format of ['parquet', 'json'] as const) {
    const out = join(dir, `typed.${format}`);
    const r = await runCli(['export', '--data', data, '--instance', 'default', '--table', 'typed', '--format', format, '--out', out]);
    t.equal(r.code, 0, r.stderr);
    t.match(r.stderr, /^exported 250 rows/, `${format}: every row`);
  }
});
