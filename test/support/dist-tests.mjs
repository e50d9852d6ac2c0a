/**
 * The steps around tsc in `npm run build` (tsc emits dist/test/ from test/, see package.json): `npm
 * test` runs dist/test/**\/*.test.js, so dist/test/ must hold exactly the tests test/ holds.
 * - The .mjs fixtures two tests import (test/cli/fixtures/crash-rows.mjs,
 *   test/fixtures/legacy/legacy-spec.mjs) are copied beside their compiled importers: tsc emits
 *   only what it compiles.
 * - Compiled files whose source is gone are removed: tsc never deletes an output, and a test
 *   renamed or deleted in test/ would otherwise still run from dist/test/ under its old name.
 * Plain JavaScript, so it runs before anything is compiled.
 */
import { copyFileSync, existsSync, mkdirSync, readdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
const SRC = join(ROOT, 'test');
const OUT = join(ROOT, 'dist', 'test');

function walk(dir) {
  if (!existsSync(dir)) return [];
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) => (e.isDirectory() ? walk(join(dir, e.name)) : [join(dir, e.name)]));
}

// Before tsc (--before): an incremental tsc trusts dist/.tsbuildinfo and does not look at its
// outputs, so a dist/ folder removed by hand would stay missing; one missing output makes the
// build a full one.
if (process.argv.includes('--before')) {
  const missing = ['lib', 'tools', 'bench', 'test'].flatMap((dir) =>
    walk(join(ROOT, dir)).filter(
      (f) => f.endsWith('.ts') && !f.endsWith('.d.ts') && !existsSync(join(ROOT, 'dist', relative(ROOT, f)).replace(/\.ts$/, '.js')),
    ),
  );
  if (missing.length > 0) rmSync(join(ROOT, 'dist', '.tsbuildinfo'), { force: true });
  process.exit(0);
}

for (const file of walk(SRC).filter((f) => f.endsWith('.mjs'))) {
  const target = join(OUT, relative(SRC, file));
  if (existsSync(target) && statSync(target).mtimeMs >= statSync(file).mtimeMs) continue;
  mkdirSync(dirname(target), { recursive: true });
  copyFileSync(file, target);
}

let removed = 0;
for (const file of walk(OUT)) {
  const rel = relative(OUT, file);
  const source = rel.endsWith('.js.map') ? rel.slice(0, -'.js.map'.length) + '.ts' : rel.endsWith('.js') ? rel.slice(0, -'.js'.length) + '.ts' : rel;
  if (!existsSync(join(SRC, source))) {
    rmSync(file);
    removed++;
  }
}
if (removed > 0) process.stderr.write(`dist/test: removed ${removed} compiled file(s) whose source in test/ is gone\n`);

// The build's time stamp: test/cli/helpers.ts compares it with the sources to tell a stale dist/
// (an incremental tsc rewrites only the files that changed, so no single output's time says it).
writeFileSync(join(ROOT, 'dist', '.built'), `${new Date().toISOString()}\n`);
