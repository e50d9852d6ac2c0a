/**
 * `rowgate serve` as a user starts it: a fresh data directory gets the demo table (stale staging
 * directories of killed seedings are removed), --port 0 prints the port actually bound, rows are
 * served CR LF framed, SIGTERM exits 0, startup errors exit 2.
 */
import { once } from 'node:events';
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, writeFileSync } from 'node:fs';
import { get } from 'node:http';
import { createServer } from 'node:net';
import { join } from 'node:path';
import t, { type Test } from 'tap';
import type { ChildProcess } from 'node:child_process';
import { ensureBuilt, runCli, serveCli, startCli, tempDir, writeFile } from './helpers.js';

const LISTENING = /^listening on http:\/\/127\.0\.0\.1:(\d+)$/;

interface Running {
  readonly child: ChildProcess;
  readonly port: number;
  readonly line: string;
  stderr(): string;
}

/** Starts serve and resolves once it printed the listening line. */
async function serve(t: Test, args: string[]): Promise<Running> {
  const child = startCli(['serve', ...args]);
  let stdout = '';
  let stderr = '';
  child.stderr!.on('data', (b: Buffer) => (stderr += b.toString()));
  t.teardown(() => {
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
  });
  const line = await new Promise<string>((resolve, reject) => {
    child.stdout!.on('data', (b: Buffer) => {
      stdout += b.toString();
      const nl = stdout.indexOf('\n');
      if (nl >= 0) resolve(stdout.slice(0, nl));
    });
    child.once('exit', (code) => reject(new Error(`serve exited with ${code} before listening:\n${stderr}`)));
  });
  const m = LISTENING.exec(line);
  if (!m) throw new Error(`unexpected first stdout line ${JSON.stringify(line)}`);
  return { child, port: Number(m[1]), line, stderr: () => stderr };
}

function httpGet(port: number, path: string): Promise<{ status: number; body: string; headers: Record<string, unknown> }> {
  return new Promise((resolve, reject) => {
    get({ host: '127.0.0.1', port, path }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body: Buffer.concat(chunks).toString('utf8'), headers: res.headers }));
      res.on('error', reject);
    }).on('error', reject);
  });
}

async function stop(child: ChildProcess, signal: NodeJS.Signals): Promise<{ code: number | null; signal: NodeJS.Signals | null }> {
  const exited = once(child, 'exit') as Promise<[number | null, NodeJS.Signals | null]>;
  child.kill(signal);
  const [code, sig] = await exited;
  return { code, signal: sig };
}

t.before(ensureBuilt);

t.test('a fresh data directory is seeded with the demo table and served', async (t) => {
  const dir = tempDir(t);
  const data = join(dir, 'nested', 'data');
  // Staging directories of seeding processes: one killed (its process is gone), one still running (this one's pid).
  const deadPid = spawnSync(process.execPath, ['-e', '']).pid;
  const stale = join(dir, 'nested', `rowgate-seeding-${deadPid}`);
  const live = join(dir, 'nested', `rowgate-seeding-${process.pid}`);
  for (const staging of [stale, live]) {
    mkdirSync(staging, { recursive: true });
    writeFile(staging, 'data.mdb', 'half-seeded');
  }
  const s = await serve(t, ['--data', data, '--port', '0', '--host', '127.0.0.1']);
  t.not(s.port, 0, 'the listening line names the port actually bound');
  t.match(s.line, LISTENING);

  const r = await httpGet(s.port, '/v1/instances/default/tables/users/rows?limit=5');
  t.equal(r.status, 200);
  t.ok(r.body.endsWith('\r\n'), 'the last row is CR LF terminated too');
  const docs = r.body.split('\r\n');
  t.equal(docs.pop(), '', 'nothing after the last CR LF');
  t.equal(docs.length, 5, '5 rows');
  for (const doc of docs) {
    const row = JSON.parse(doc) as { entityId: unknown; cells: Record<string, Record<string, unknown[]>> };
    t.ok(Array.isArray(row.entityId) && typeof (row.entityId as unknown[])[0] === 'number', 'entityId is [uid]');
    t.ok(row.cells.info?.name?.length, 'info:name present');
    t.ok(row.cells.logins && Object.keys(row.cells.logins).length > 0, 'login counters present');
  }

  const all = await httpGet(s.port, '/v1/instances/default/tables/users/rows?limit=5000&versions=all');
  const rows = all.body.split('\r\n').filter((x) => x !== '');
  t.equal(rows.length, 1000, 'the demo table has 1,000 rows');
  t.ok(
    rows.some((doc) => /"score":\[\{[^\]]*\},\{/.test(doc)),
    'some columns have several versions',
  );

  const ended = await stop(s.child, 'SIGTERM');
  t.same(ended, { code: 0, signal: null }, 'SIGTERM exits 0');
  t.notOk(/"level":50/.test(s.stderr()), 'no error logged');
  t.same(
    readdirSync(join(dir, 'nested')).sort(),
    ['data', `rowgate-seeding-${process.pid}`],
    "no staging directory left behind; the stale one of a killed seeding removed, a running process's kept",
  );
});

t.test('an existing data directory is served as it is; SIGINT exits 0', async (t) => {
  const dir = tempDir(t);
  const data = join(dir, 'data');
  const first = await serve(t, ['--data', data, '--port', '0']);
  const seeded = await httpGet(first.port, '/v1/instances/default/tables/users/rows?eid=[1000]&versions=all');
  t.same(await stop(first.child, 'SIGTERM'), { code: 0, signal: null });

  const second = await serve(t, ['--data', data, '--port', '0']);
  const again = await httpGet(second.port, '/v1/instances/default/tables/users/rows?eid=[1000]&versions=all');
  t.equal(again.body, seeded.body, 'same demo row after a restart (not re-seeded)');
  t.match(seeded.body, /^\{"entityId":\[1000\],"cells":\{"info":/);
  t.same(await stop(second.child, 'SIGINT'), { code: 0, signal: null });
});

t.test("regression: --workers 2 announces the gateway port, not the admin listener's", async (t) => {
  const dir = tempDir(t);
  const s = await serve(t, ['--data', join(dir, 'data'), '--port', '0', '--workers', '2']);
  for (let i = 0; i < 4; i++) {
    const res = await httpGet(s.port, '/v1/instances/default/tables/users/rows?eid=[1000]&cols=info:name');
    t.equal(res.status, 200, 'the announced port serves the gateway');
  }
  t.same(await stop(s.child, 'SIGTERM'), { code: 0, signal: null });
});

t.test('--config names the store; flags override the file', async (t) => {
  const dir = tempDir(t);
  const config = writeFile(dir, 'rowgate.yaml', `port: 1\nhost: 127.0.0.1\nrevision: 2\nstore:\n  kind: lmdb\n  path: ${join(dir, 'from-config')}\n`);
  const s = await serve(t, ['--config', config, '--port', '0']);
  t.ok(existsSync(join(dir, 'from-config')), 'the data directory of the configuration file is used');
  const v = await httpGet(s.port, '/v1/instances/default/tables/users/rows?eid=[1000]');
  t.equal(v.status, 200);
  t.match(v.body, /^\{"entityId":"\[1000\]"/, 'revision 2 from the file: shell entity ids');
  t.same(await stop(s.child, 'SIGTERM'), { code: 0, signal: null });
});

t.test('startup errors print the message and exit 2, without a stack trace', async (t) => {
  const dir = tempDir(t);
  const bad = await runCli(['serve', '--data', join(dir, 'd'), '--revision', '7']);
  t.equal(bad.code, 2);
  t.match(bad.stderr, /^rowgate serve: configuration revision: must be an integer from 1 to 3, got "7"\n$/);
  t.equal(bad.stdout, '');
  t.notOk(existsSync(join(dir, 'd')), 'nothing created on a bad configuration');

  const config = writeFile(dir, 'bad.yaml', 'prot: 8080\n');
  const unknown = await runCli(['serve', '--config', config]);
  t.equal(unknown.code, 2);
  t.match(unknown.stderr, /configuration prot: unknown key/);
  t.notMatch(unknown.stderr, /\n\s+at /, 'no stack trace');

  const missing = await runCli(['serve', '--config', join(dir, 'nope.yaml')]);
  t.equal(missing.code, 2);
  t.match(missing.stderr, /cannot read .*nope\.yaml/);

  // A port already taken.
  const blocker = createServer();
  await new Promise<void>((resolve) => blocker.listen(0, '127.0.0.1', resolve));
  t.teardown(() => blocker.close());
  const port = (blocker.address() as { port: number }).port;
  const busy = await runCli(['serve', '--data', join(dir, 'busy'), '--port', String(port)]);
  t.equal(busy.code, 2);
  t.match(busy.stderr, /EADDRINUSE/);
  t.notMatch(busy.stderr, /\n\s+at /, 'no stack trace');
  t.same(
    readdirSync(dir).filter((name) => name !== 'bad.yaml'),
    [],
    'the port is checked first: no demo data directory (or staging directory) left behind',
  );

  // Not an LMDB data directory: lmdb-js crashed the process (SIGSEGV, exit 139) on it.
  mkdirSync(join(dir, 'notlmdb'));
  writeFileSync(join(dir, 'notlmdb', 'data.mdb'), 'not a database\n'.repeat(1000));
  const notLmdb = await runCli(['serve', '--data', join(dir, 'notlmdb'), '--port', '0']);
  t.same({ code: notLmdb.code, signal: notLmdb.signal }, { code: 2, signal: null });
  t.match(notLmdb.stderr, /^rowgate serve: the data directory .*notlmdb cannot be opened: data\.mdb is not an LMDB data file/);

  const usage = await runCli(['serve', '--bogus']);
  t.equal(usage.code, 2);
  t.match(usage.stderr, /unknown option '--bogus'/);
});

t.test(
  'regression: serve --workers 2 whose workers cannot open the store exits 2 with their message (the workers and the primary waited for ever)',
  async (t) => {
    // The primary does not open a Bigtable store; each worker does, and finds nothing listening on
    // port 1. One process exited 2 at once; with workers, each printed the error and stayed up (its
    // IPC channel to the primary kept it alive), and the primary waited for them to listen or exit.
    const dir = tempDir(t);
    const config = writeFile(dir, 'bigtable.yaml', 'port: 0\nhost: 127.0.0.1\nstore: {kind: bigtable, projectId: p, instanceId: i}\n');
    const child = startCli(['serve', '--config', config, '--workers', '2'], { env: { BIGTABLE_EMULATOR_HOST: '127.0.0.1:1' } });
    let stderr = '';
    child.stderr!.on('data', (b: Buffer) => (stderr += b.toString()));
    const hang = setTimeout(() => child.kill('SIGKILL'), 30_000);
    t.teardown(() => clearTimeout(hang));
    const [code, signal] = (await once(child, 'exit')) as [number | null, NodeJS.Signals | null];
    t.same({ code, signal }, { code: 2, signal: null }, 'serve exited 2 by itself');
    t.match(stderr, /rowgate serve: opening Bigtable instance projects\/p\/instances\/i: Bigtable is unavailable/, "a worker's message");
    t.match(stderr, /rowgate: worker \d+ exited \(2\) before listening/, "the primary's");
  },
);

t.test('request log lines written just before SIGTERM are in the log when serve exits; each names the X-Request-Id its response carried', async (t) => {
  const dir = tempDir(t);
  const served = await serveCli(t, ['--data', join(dir, 'data'), '--port', '0', '--host', '127.0.0.1', '--log-level', 'info']);
  const ids: string[] = [];
  for (let i = 0; i < 5; i++) {
    const res = await fetch(`http://127.0.0.1:${served.port}/v1/instances/default/tables/users/rows?eid=[${1000 + i}]`, {
      headers: i === 0 ? { 'x-request-id': 'client-chosen-1' } : {},
    });
    t.equal(res.status, 200);
    await res.arrayBuffer();
    ids.push(res.headers.get('x-request-id') ?? '');
  }
  // Request lines wait up to 50 ms to be written together: stop at once, before that.
  t.equal(await served.stop(), 0);
  const logged = served
    .stderr()
    .split('\n')
    .filter((l) => l.includes('"msg":"request"'))
    .map((l) => JSON.parse(l) as { reqId: string; status: number; instance: string; table: string; client: string });
  t.same(
    logged.map((l) => l.reqId),
    ids,
    'one line per request, in order, with the id its response carried',
  );
  t.equal(ids[0], 'client-chosen-1');
  t.match(logged[1], { status: 200, instance: 'default', table: 'users', client: '127.0.0.1' });
});

t.test('a busy admin port is named as the admin listener with how to move it; --admin-port and ROWGATE_ADMIN_PORT move it', async (t) => {
  const dir = tempDir(t);
  const blocker = createServer();
  // The admin port is the main port + 1: take a port whose successor is the one blocked.
  await new Promise<void>((resolve) => blocker.listen(0, '127.0.0.1', resolve));
  t.teardown(() => blocker.close());
  const adminPort = (blocker.address() as { port: number }).port;
  const busy = await runCli(['serve', '--data', join(dir, 'data'), '--port', String(adminPort - 1)]);
  t.equal(busy.code, 2);
  t.match(busy.stderr, new RegExp(`admin listener: listen EADDRINUSE[^\\n]*:${adminPort}[^\\n]*--admin-port`), busy.stderr);
  const moved = await serveCli(t, ['--data', join(dir, 'data'), '--port', '0', '--admin-port', '0']);
  t.ok(moved.adminPort !== undefined && moved.adminPort !== adminPort, '--admin-port 0: any free port');
  t.equal(await moved.stop(), 0);
  const fromEnv = await serveCli(t, ['--data', join(dir, 'data'), '--port', '0'], { env: { ROWGATE_ADMIN_PORT: '0' } });
  t.ok(fromEnv.adminPort !== undefined && fromEnv.adminPort !== adminPort, 'ROWGATE_ADMIN_PORT=0: any free port');
  t.equal(await fromEnv.stop(), 0);
});
