/**
 * Where rules live (issue #17): what differs between the interface's revisions is decided in
 * lib/rows/dialect.ts only; everything else asks the dialect (a revision compared anywhere else
 * is a rule with a second home).
 */
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import t from 'tap';

const LIB = fileURLToPath(new URL('../lib', import.meta.url));

function sources(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    return statSync(path).isDirectory() ? sources(path) : path.endsWith('.ts') ? [path] : [];
  });
}

t.test('revision checks (revision === / !== / < / >) appear only in lib/rows/dialect.ts', async (t) => {
  const found: string[] = [];
  for (const file of sources(LIB)) {
    const rel = relative(LIB, file);
    if (rel === join('rows', 'dialect.ts')) continue;
    readFileSync(file, 'utf8')
      .split('\n')
      .forEach((line, i) => {
        if (/\brevision\s*(?:[!=]==|[<>]=?)\s*\d/.test(line)) found.push(`lib/${rel}:${i + 1}: ${line.trim()}`);
      });
  }
  t.same(found, [], 'every revision difference is a dialect property');
});
