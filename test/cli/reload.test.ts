/**
 * SIGHUP re-reads the configuration file (docs/configuration.md, "Reload (SIGHUP)") over real sockets:
 * a token added works and a token removed gets 401 at once, a scan running across the reload
 * finishes with every row, read-only and the log level change live, a file that fails
 * validation keeps the running configuration (and says why), restart-only settings are logged as
 * ignored, and with --workers every worker reloads.
 */
import { once } from 'node:events';
import { request, type IncomingMessage } from 'node:http';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import t, { type Test } from 'tap';
import { sha256Hex } from '../../lib/http/auth.js';
import { ensureBuilt, runCli, serveCli, startCli, tempDir, writeFile } from './helpers.js';

const TOKEN_A = 'token-a-0123456789';
const TOKEN_B = 'token-b-0123456789';

function configText(dir: string, extra: string, tokens: Record<string, string>): string {
  const list = Object.entries(tokens)
    .map(([name, token]) => `    - {name: ${name}, sha256: ${sha256Hex(token)}, scopes: {'*': '*'}}\n`)
    .join('');
  return `host: 127.0.0.1\nport: 0\nstore: {kind: lmdb, path: ${join(dir, 'data')}}\nauth:\n  tokens:\n${list}${extra}`;
}

const POINT = '/v1/instances/default/tables/users/rows?eid=[1000]&cols=info:name';

/** Status of a request on a fresh connection (so that, with workers, connections spread over them). */
async function status(port: number, token: string | undefined, method = 'GET', path = POINT, body?: string): Promise<number> {
  const res = await fetch(`http://127.0.0.1:${port}${path}`, {
    method,
    headers: {
      connection: 'close',
      ...(token === undefined ? {} : { authorization: `Bearer ${token}` }),
      ...(body === undefined ? {} : { 'content-type': 'application/json' }),
    },
    body,
  });
  await res.arrayBuffer();
  return res.status;
}

t.before(ensureBuilt);

t.test('tokens, read-only and log level change live; a running scan finishes; bad files and restart-only settings are reported', async (t) => {
  const dir = tempDir(t);
  const config = writeFile(dir, 'rowgate.yaml', configText(dir, '', { a: TOKEN_A }));
  const s = await serveCli(t, ['--config', config]);
  // ~20 MB more rows than socket buffers hold, so the scan below is still running at the reload.
  const lines: string[] = [];
  const name = 'n'.repeat(4000);
  for (let i = 0; i < 5000; i++) lines.push(JSON.stringify({ entityId: [100_000 + i], cells: { info: { name: [{ value: name, timestamp: 1000 }] } } }));
  const imported = await runCli([
    'import',
    '--data',
    join(dir, 'data'),
    '--instance',
    'default',
    '--table',
    'users',
    writeFile(dir, 'rows.ndjson', lines.join('\n') + '\n'),
  ]);
  t.equal(imported.code, 0, imported.stderr);

  t.equal(await status(s.port, TOKEN_A), 200, 'token a works');
  t.equal(await status(s.port, TOKEN_B), 401, 'token b is unknown');

  // A scan started with token a, paused by its reader (backpressure holds it open on the server).
  const scan = await new Promise<IncomingMessage>((resolve, reject) => {
    request(
      {
        host: '127.0.0.1',
        port: s.port,
        path: '/v1/instances/default/tables/users/rows?limit=100000&cols=info:name',
        headers: { authorization: `Bearer ${TOKEN_A}` },
      },
      resolve,
    )
      .on('error', reject)
      .end();
  });
  t.equal(scan.statusCode, 200);
  scan.pause();
  await sleep(200);
  const metrics = await (await fetch(`http://127.0.0.1:${s.adminPort}/metrics`)).text();
  t.match(metrics, /^rowgate_open_scans 1$/m, 'the scan is running on the server');

  writeFile(dir, 'rowgate.yaml', configText(dir, '', { b: TOKEN_B }));
  process.kill(s.pid, 'SIGHUP');
  await s.waitLog(/"changed":\["auth"\],"tokens":\["b"\],"msg":"configuration reloaded"/);
  t.equal(await status(s.port, TOKEN_B), 200, 'a token added works');
  t.equal(await status(s.port, TOKEN_A), 401, 'a token removed gets 401');

  let body = '';
  scan.setEncoding('utf8');
  scan.on('data', (c: string) => (body += c));
  scan.resume();
  await once(scan, 'end');
  const rows = body.split('\r\n').filter((l) => l !== '');
  t.equal(rows.length, 6000, 'the scan started before the reload sent every row');
  t.ok(scan.complete, 'and completed');

  // A file that fails validation: the running configuration stays.
  writeFile(dir, 'rowgate.yaml', configText(dir, 'limits: {maxScans: many}\n', { a: TOKEN_A }));
  process.kill(s.pid, 'SIGHUP');
  await s.waitLog(
    /"error":"configuration limits\.maxScans: must be an integer[^\n]*"msg":"SIGHUP: the configuration file was refused; the running configuration stays"/,
  );
  t.equal(await status(s.port, TOKEN_B), 200, 'token b still works');
  t.equal(await status(s.port, TOKEN_A), 401, 'token a is still refused');

  // Restart-only settings are reported and ignored (the admin port follows the port); read-only and the log level apply.
  writeFile(dir, 'rowgate.yaml', configText(dir, 'port: 1\nrevision: 2\nreadOnly: true\nlogLevel: warn\n', { b: TOKEN_B }).replace('port: 0\n', ''));
  process.kill(s.pid, 'SIGHUP');
  await s.waitLog(/"ignored":\["port","revision","admin"\],"msg":"SIGHUP: these settings changed but need a restart; ignored until then"/);
  const requestsLogged = (s.stderr().match(/"msg":"request"/g) ?? []).length;
  t.equal(
    await status(
      s.port,
      TOKEN_B,
      'POST',
      '/v1/instances/default/tables/users/rows',
      JSON.stringify({ entityId: [1], cells: { info: { name: [{ value: 'x' }] } } }),
    ),
    403,
    'read-only: a write is refused',
  );
  const v = await fetch(`http://127.0.0.1:${s.port}${POINT}`, { headers: { authorization: `Bearer ${TOKEN_B}` } });
  t.match(await v.text(), /^\{"entityId":\[1000\]/, 'still revision 3 (a revision change needs a restart)');
  await sleep(100);
  t.equal((s.stderr().match(/"msg":"request"/g) ?? []).length, requestsLogged, 'log level warn: no request lines at info since the reload');
  t.equal(await s.stop(), 0);
  t.notMatch(s.stderr(), /"level":50,(?!.*SIGHUP)/, 'no other error logged');
});

t.test('no configuration file: SIGHUP says so and keeps serving', async (t) => {
  const dir = tempDir(t);
  const s = await serveCli(t, ['--data', join(dir, 'data'), '--port', '0', '--host', '127.0.0.1']);
  process.kill(s.pid, 'SIGHUP');
  await s.waitLog(/SIGHUP: there is no configuration file to reload/);
  t.equal(await status(s.port, undefined), 200);
  t.equal(await s.stop(), 0);
});

t.test('with --workers, every worker reloads', async (t) => {
  const dir = tempDir(t);
  const config = writeFile(dir, 'rowgate.yaml', configText(dir, '', { a: TOKEN_A }));
  const s = await serveCli(t, ['--config', config, '--workers', '2']);
  writeFile(dir, 'rowgate.yaml', configText(dir, '', { b: TOKEN_B }));
  process.kill(s.pid, 'SIGHUP');
  await s.waitLog(/"msg":"configuration reloaded"/);
  await sleep(300);
  const reloaded = s.stderr().match(/^.*"msg":"configuration reloaded".*$/gm) ?? [];
  t.equal(reloaded.length, 1, 'one line for the reload, from the primary');
  const line = JSON.parse(reloaded[0]!) as { pid: number; pids: number[]; changed: string[] };
  t.equal(line.pid, s.pid, 'logged by the primary');
  t.equal(new Set(line.pids).size, 2, "with both workers' pids");
  t.notOk(line.pids.includes(s.pid));
  t.same(line.changed, ['auth']);
  for (let i = 0; i < 8; i++) {
    t.equal(await status(s.port, TOKEN_B), 200, `connection ${i}: token b works`);
    t.equal(await status(s.port, TOKEN_A), 401, `connection ${i}: token a is refused`);
  }
  t.equal(await s.stop(), 0);
});

t.test('a SIGHUP while serve --workers starts neither ends it nor any worker', async (t) => {
  const dir = tempDir(t);
  const config = writeFile(dir, 'rowgate.yaml', configText(dir, '', { a: TOKEN_A }));
  const child = startCli(['serve', '--config', config, '--workers', '2']);
  t.teardown(() => {
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
  });
  let stdout = '';
  let stderr = '';
  let hups = 0;
  child.stderr!.on('data', (b: Buffer) => {
    stderr += b.toString();
    // Once the primary has seeded the data directory, the workers are about to start.
    if (hups === 0 && /created a new data directory/.test(stderr)) {
      hups++;
      child.kill('SIGHUP');
    }
  });
  const port = await new Promise<number>((resolve, reject) => {
    child.stdout!.on('data', (b: Buffer) => {
      stdout += b.toString();
      const m = /^listening on http:\/\/127\.0\.0\.1:(\d+)\n/.exec(stdout);
      if (m) resolve(Number(m[1]));
    });
    child.once('exit', (code) => reject(new Error(`serve exited with ${code} before listening:\n${stderr}`)));
  });
  t.equal(hups, 1, 'the SIGHUP was sent before serve listened');
  t.equal(await status(port, TOKEN_A), 200);
  t.notMatch(stderr, /exited .* before listening|worker died/);
  const exited = once(child, 'exit');
  child.kill('SIGTERM');
  t.equal((await exited)[0], 0);
});

t.test('a reload that drops auth is refused unless the file says auth: {required: false}', async (t) => {
  const dir = tempDir(t);
  const config = writeFile(dir, 'rowgate.yaml', configText(dir, '', { a: TOKEN_A }));
  const s = await serveCli(t, ['--config', config]);
  const open = `host: 127.0.0.1\nport: 0\nstore: {kind: lmdb, path: ${join(dir, 'data')}}\n`;
  writeFile(dir, 'rowgate.yaml', open);
  process.kill(s.pid, 'SIGHUP');
  await s.waitLog(/"level":50,[^\n]*auth[^\n]*"msg":"SIGHUP: the configuration file was refused; the running configuration stays"/);
  t.equal(await status(s.port, undefined), 401, 'still requires a token');
  t.equal(await status(s.port, TOKEN_A), 200, 'token a still works');

  writeFile(dir, 'rowgate.yaml', `${open}auth: {required: false}\n`);
  process.kill(s.pid, 'SIGHUP');
  await s.waitLog(/"changed":\["auth"\][^\n]*"msg":"configuration reloaded"/);
  t.equal(await status(s.port, undefined), 200, 'said explicitly: the gateway is open');
  t.equal(await s.stop(), 0);
});

t.test('the outcome of a reload is logged whatever the log level', async (t) => {
  const dir = tempDir(t);
  const config = writeFile(dir, 'rowgate.yaml', configText(dir, 'logLevel: error\n', { a: TOKEN_A }));
  const s = await serveCli(t, ['--config', config]);
  writeFile(dir, 'rowgate.yaml', configText(dir, 'logLevel: warn\n', { b: TOKEN_B }));
  process.kill(s.pid, 'SIGHUP');
  await s.waitLog(/"changed":\["auth","logLevel"\],"tokens":\["b"\],"msg":"configuration reloaded"/);
  t.equal(await status(s.port, TOKEN_B), 200);
  t.equal(await s.stop(), 0);
});
