/**
 * The command line's bundle, built by `npm run build` after tsc: the compiled entry
 * (dist/tools/rowgate-cli.js) and the two worker threads' (the scan threads' and the import's),
 * with every rowgate module they import, as a few files in dist/bundle/ that tools/rowgate loads.
 * esbuild joins them; packages stay in node_modules and load as they do unbundled, and the tests
 * import dist/'s modules themselves (the CLI tests run the bundle).
 *
 * Why: Node loads each ES module on its own (resolve, read, compile, link), and a command loaded
 * ~115 of rowgate's. A Parquet export of the 1,000,000 bench rows took 1.13 s against 1.19 s
 * unbundled (eight alternated pairs; its scan threads load theirs too), and `rowgate export
 * --limit 1` 0.20-0.21 s against 0.22-0.23 s.
 *
 * The workers' entries sit beside the code that starts them: scan-pool.ts and import.ts start
 * './scan-worker.js' and './import-worker.js' beside their own module, which in the bundle is a
 * file of dist/bundle/ like every entry and chunk.
 */
import { build } from 'esbuild';
import { rmSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const DIST = join(dirname(fileURLToPath(import.meta.url)), '..');
const OUT = join(DIST, 'bundle');

/** The bundle's entries by the file name each gets in dist/bundle/. */
const ENTRIES = {
  'rowgate-cli': join(DIST, 'tools', 'rowgate-cli.js'),
  'scan-worker': join(DIST, 'lib', 'store', 'lmdb', 'scan-worker.js'),
  'import-worker': join(DIST, 'tools', 'commands', 'import-worker.js'),
};

// A chunk of an earlier build, its hash no longer referenced, would stay otherwise.
rmSync(OUT, { recursive: true, force: true });
await build({
  entryPoints: ENTRIES,
  outdir: OUT,
  bundle: true,
  // Each command's modules stay in chunks of their own, loaded when that command runs (rowgate-cli.ts).
  splitting: true,
  format: 'esm',
  platform: 'node',
  target: 'node20',
  packages: 'external',
  chunkNames: '[name]-[hash]',
  // `node --enable-source-maps tools/rowgate ...` shows a stack trace's lines in lib/ and tools/.
  sourcemap: true,
  logLevel: 'warning',
});
