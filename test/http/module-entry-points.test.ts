/**
 * Any module can be the first one loaded (issue #17): the route table, the OpenAPI document and
 * the handlers once formed an import cycle that only worked because every entry point loaded
 * routes.ts first; loading handlers/openapi.js first threw "Cannot access 'getOpenApi' before
 * initialization". Each module here is imported first in a fresh node process, from dist/ as the
 * command line runs it (built when missing or stale). test/architecture.test.ts finds any cycle.
 */
import { spawn } from 'node:child_process';
import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import t from 'tap';
import { ensureBuilt, ROOT } from '../cli/helpers.js';

function loadFirst(module: string): Promise<{ code: number | null; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['--input-type=module', '-e', `await import(${JSON.stringify(join(ROOT, module))});`], {
      cwd: ROOT,
      stdio: ['ignore', 'ignore', 'pipe'],
    });
    let stderr = '';
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString('utf8')));
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, stderr }));
  });
}

t.test('every HTTP handler, the route table and the OpenAPI document load first in a fresh process', async (t) => {
  await ensureBuilt();
  const handlers = readdirSync(join(ROOT, 'dist/lib/http/handlers'))
    .filter((name) => name.endsWith('.js'))
    .map((name) => `dist/lib/http/handlers/${name}`);
  t.ok(handlers.includes('dist/lib/http/handlers/openapi.js'), 'the handler of /v1/openapi.json is among them');
  for (const module of [...handlers, 'dist/lib/http/openapi.js', 'dist/lib/http/routes.js', 'dist/lib/http/server.js']) {
    const { code, stderr } = await loadFirst(module);
    t.equal(code, 0, `${module} loads first`, { stderr: stderr.slice(0, 2000) });
  }
});
