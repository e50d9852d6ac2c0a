/**
 * npm 11 runs a dependency's install scripts only when package.json's allowScripts says so, and
 * warns about every package it does not cover (docs/development.md, "Installing"). Every installed package with
 * an install script (preinstall, install, postinstall, or a binding.gyp, which npm builds with an
 * implicit `node-gyp rebuild`) must have an entry, so that `npm install` stays quiet when
 * dependencies change; and no entry names a package that is no longer installed.
 */
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import t from 'tap';
import { ROOT } from './helpers.js';

interface Manifest {
  name?: string;
  scripts?: Record<string, string>;
  allowScripts?: Record<string, boolean>;
}

/** Names of the packages under `dir` (node_modules, nested ones too) that have install scripts. */
function withInstallScripts(dir: string, found: Set<string>, depth = 0): void {
  if (depth > 8 || !existsSync(dir)) return;
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    if (!entry.isDirectory() || entry.name.startsWith('.')) continue;
    const path = join(dir, entry.name);
    if (entry.name.startsWith('@')) {
      withInstallScripts(path, found, depth);
      continue;
    }
    const manifestPath = join(path, 'package.json');
    if (existsSync(manifestPath)) {
      const m = JSON.parse(readFileSync(manifestPath, 'utf8')) as Manifest;
      const s = m.scripts ?? {};
      if (s.preinstall !== undefined || s.install !== undefined || s.postinstall !== undefined || existsSync(join(path, 'binding.gyp')))
        found.add(m.name ?? entry.name);
    }
    withInstallScripts(join(path, 'node_modules'), found, depth + 1);
  }
}

t.test('allowScripts covers exactly the installed packages with install scripts', async (t) => {
  const allow = (JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as Manifest).allowScripts ?? {};
  const found = new Set<string>();
  withInstallScripts(join(ROOT, 'node_modules'), found);
  t.ok(found.size > 0, `packages with install scripts: ${[...found].join(', ')}`);
  for (const name of found) t.ok(name in allow, `${name} has an allowScripts entry`);
  for (const name of Object.keys(allow)) t.ok(found.has(name), `allowScripts entry ${name} is an installed package with install scripts`);
});
