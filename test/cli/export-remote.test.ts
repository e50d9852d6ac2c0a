/**
 * `rowgate export --url` against a gateway on 127.0.0.1: the file equals one full scan (GET
 * rows?limit=-1) and the local export byte for byte, with and without --parallel; the token from
 * --token or ROWGATE_TOKEN; ls, get and scan --url print what they print locally; a connection
 * cut mid-range is retried from the next row; a SIGINT says how to continue.
 */
import { spawn } from 'node:child_process';
import { existsSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import type { Socket } from 'node:net';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import t from 'tap';
import { sha256Hex } from '../../lib/http/auth.js';
import { raw, startGatewayOver } from '../http/harness.js';
import { filledGateway, ROWS, tcpProxy } from './export-fixtures.js';
import { AVRO_READER_MISSING, hasPythonAvro, readWithPythonAvro } from '../support/python-avro.js';
import { expectedAvroRecords } from '../http/suites/avro-expected.js';
import { CLI, ensureBuilt, ROOT, runCli, tempDir, type CliResult } from './helpers.js';

t.before(ensureBuilt);

const TABLE = ['--instance', 'default', '--table', 'sample_table'];
const ROWS_PATH = '/v1/instances/default/tables/sample_table/rows';

/** Runs the CLI with extra environment variables. */
function runEnv(args: readonly string[], env: Record<string, string>): Promise<CliResult> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [CLI, ...args], { cwd: ROOT, env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
    const out: Buffer[] = [];
    const err: Buffer[] = [];
    child.stdout.on('data', (b: Buffer) => out.push(b));
    child.stderr.on('data', (b: Buffer) => err.push(b));
    child.on('error', reject);
    child.on('close', (code, signal) => resolve({ code, signal, stdout: Buffer.concat(out).toString('utf8'), stderr: Buffer.concat(err).toString('utf8') }));
  });
}

t.test('export --url equals the full scan and the local export, with and without --parallel', async (t) => {
  const dir = tempDir(t);
  const h = await filledGateway(t, dir);
  const full = (await raw(h.base, 'GET', `${ROWS_PATH}?limit=-1`)).body;
  t.equal(full.split('\r\n').length - 1, ROWS);
  const local = await runCli(['export', '--data', join(dir, 'data'), ...TABLE]);
  t.equal(local.stdout, full, 'the local export is the full scan');

  const stdout = await runCli(['export', '--url', h.base, ...TABLE]);
  t.equal(stdout.code, 0, stdout.stderr);
  t.ok(stdout.stdout === full, 'to standard output: the full scan, byte for byte');
  t.match(stdout.stderr, /^exported 3000 rows, 6000 cells from http:\/\/127\.0\.0\.1:\d+ in \d+\.\d\d s \(\d+ rows\/s\); wrote (\d+) bytes\n$/);
  t.match(local.stderr, /^exported 3000 rows, 6000 cells in /, 'the cells a local export counts');
  t.equal(Number(/wrote (\d+) bytes/.exec(stdout.stderr)?.[1]), Buffer.byteLength(full), 'the bytes written');
  // An Avro file: the bytes of the file, not the JSON received.
  const avroOut = join(dir, 'summary.avro');
  const avro = await runCli(['export', '--url', h.base, ...TABLE, '--out', avroOut]);
  t.equal(avro.code, 0, avro.stderr);
  t.equal(Number(/wrote (\d+) bytes/.exec(avro.stderr)?.[1]), statSync(avroOut).size, 'avro: the file bytes');
  for (const parallel of ['2', '4', '7']) {
    const out = join(dir, `p${parallel}.json`);
    const r = await runCli(['export', '--url', h.base, ...TABLE, '--parallel', parallel, '--out', out]);
    t.equal(r.code, 0, r.stderr);
    t.ok(readFileSync(out, 'utf8') === full, `--parallel ${parallel}: the full scan, byte for byte`);
    t.notOk(existsSync(`${out}.partial`), 'no partial file left');
  }
  const piped = await runCli(['export', '--url', h.base, ...TABLE, '--parallel', '3']);
  t.ok(piped.stdout === full, '--parallel to standard output');
  t.equal(piped.stderr.split('\n').length, 2, 'into a pipe: only the summary line');

  // Selections go to the gateway as they are.
  const docs = full.split('\r\n').slice(0, -1);
  const eidOf = (doc: string): string => JSON.stringify((JSON.parse(doc) as { entityId: unknown }).entityId);
  const range = await runCli(['export', '--url', h.base, ...TABLE, '--start-eid', eidOf(docs[10]!), '--end-eid', eidOf(docs[2000]!), '--parallel', '4']);
  t.equal(
    range.stdout,
    docs
      .slice(10, 2000)
      .map((d) => `${d}\r\n`)
      .join(''),
    'a key range, split and joined',
  );
  const limited = await runCli(['export', '--url', h.base, ...TABLE, '--limit', '5', '--cols', 'longs']);
  t.equal(limited.stdout, (await raw(h.base, 'GET', `${ROWS_PATH}?limit=5&cols=longs&versions=all`)).body);

  const bad = await runCli(['export', ...TABLE, '--parallel', '2']);
  t.equal(bad.code, 2, '--parallel without --url is bad usage');
  const badCols = await runCli(['export', '--url', h.base, ...TABLE, '--cols', 'nofamily']);
  t.equal(badCols.code, 2, 'options are checked against the served layout before any row is read');
  t.match(badCols.stderr, /^rowgate export: cols names an unknown family: "nofamily"/);
  const noTable = await runCli(['export', '--url', h.base, '--instance', 'default', '--table', 'nope']);
  t.equal(noTable.code, 1);
  t.match(
    noTable.stderr,
    /^rowgate export: http:\/\/127\.0\.0\.1:\d+: table nope not found in instance default \(404 RG_ERR_TABLE_NOT_FOUND\)\n$/,
    "the gateway's error, named",
  );
});

t.test('the token comes from --token or ROWGATE_TOKEN; ls, get and scan --url print what they print locally', async (t) => {
  const dir = tempDir(t);
  const h = await filledGateway(t, dir, { auth: { tokens: [{ name: 'reader', sha256: sha256Hex('s3cret'), scopes: { '*': 'read' } }] } });
  const url = ['--url', h.base];
  const data = ['--data', join(dir, 'data')];
  const refused = await runCli(['export', ...url, ...TABLE]);
  t.equal(refused.code, 1);
  t.match(refused.stderr, /401 RG_ERR_UNAUTHORIZED/);
  const byFlag = await runCli(['export', ...url, '--token', 's3cret', ...TABLE]);
  const byEnv = await runEnv(['export', ...url, ...TABLE, '--parallel', '2'], { ROWGATE_TOKEN: 's3cret' });
  const local = await runCli(['export', ...data, ...TABLE]);
  t.ok(byFlag.stdout === local.stdout && byEnv.stdout === local.stdout, 'with the token: the local export');

  const env = { ROWGATE_TOKEN: 's3cret' };
  t.equal((await runEnv(['ls', ...url], env)).stdout, (await runCli(['ls', ...data])).stdout);
  t.equal((await runEnv(['ls', ...url, '--instance', 'default'], env)).stdout, (await runCli(['ls', ...data, '--instance', 'default'])).stdout);
  const eid = JSON.stringify([1_000_003 * 5]);
  const get = await runEnv(['get', ...url, ...TABLE, '--eid', eid, '--versions', 'all'], env);
  t.equal(get.stdout, (await runCli(['get', ...data, ...TABLE, '--eid', eid, '--versions', 'all'])).stdout, 'get --url');
  t.equal(get.stdout.split('\n').length, 2, 'one line, LF');
  for (const args of [[], ['--limit', '25', '--cols', 'strings'], ['--start-eid', eid, '--limit', '3']]) {
    const remote = await runEnv(['scan', ...url, ...TABLE, ...args], env);
    t.equal(remote.code, 0, remote.stderr);
    t.equal(remote.stdout, (await runCli(['scan', ...data, ...TABLE, ...args])).stdout, `scan --url ${args.join(' ')}`);
  }
});

/**
 * A TCP proxy to `target` that cuts each of the first `cuts` connections after `after` bytes of
 * response (the gateway's rows stop mid-stream, as a dropped network would stop them).
 */
async function cuttingProxy(
  t: { teardown(fn: () => unknown): void },
  target: string,
  cuts: number,
  after: number,
): Promise<{ url: string; cut: () => number }> {
  let cut = 0;
  const url = await tcpProxy(t, target, (client, upstream) => {
    const cutThis = cut < cuts;
    let sent = 0;
    upstream.on('data', (data: Buffer) => {
      if (cutThis && sent + data.length > after) {
        client.write(data.subarray(0, Math.max(0, after - sent)));
        cut++;
        client.destroy();
        upstream.destroy();
        return;
      }
      sent += data.length;
      client.write(data);
    });
  });
  return { url, cut: () => cut };
}

t.test('a connection cut mid-range is retried from the next row: no row twice, none missing', async (t) => {
  const dir = tempDir(t);
  const h = await filledGateway(t, dir);
  const full = (await raw(h.base, 'GET', `${ROWS_PATH}?limit=-1`)).body;
  // The layout request and each range request go through the proxy; it cuts 3 of them mid-body.
  const proxy = await cuttingProxy(t, h.base, 4, 150_000);
  const out = join(dir, 'cut.json');
  const r = await runCli(['export', '--url', proxy.url, ...TABLE, '--out', out]);
  t.equal(r.code, 0, r.stderr);
  t.ok(proxy.cut() >= 2, `connections were cut (${proxy.cut()})`);
  t.match(r.stderr, /retrying from the next row/);
  t.ok(readFileSync(out, 'utf8') === full, 'the file is the full scan, byte for byte');

  const parallelProxy = await cuttingProxy(t, h.base, 6, 40_000);
  const p = await runCli(['export', '--url', parallelProxy.url, ...TABLE, '--parallel', '4']);
  t.equal(p.code, 0, p.stderr);
  t.ok(p.stdout === full, '--parallel 4 through cuts: the full scan, byte for byte');
});

t.test('a gateway restarting before rows flow is waited for: the layout and splits requests are retried as rows are', async (t) => {
  const dir = tempDir(t);
  const h = await filledGateway(t, dir);
  const full = (await raw(h.base, 'GET', `${ROWS_PATH}?limit=-1`)).body;

  // The gateway stops and comes back on its port once the export has told its first refused
  // request (ECONNREFUSED; waiting a fixed 0.8 s instead failed on a loaded machine, where the
  // CLI had not started by then); --parallel asks for the splits too.
  for (const parallel of ['1', '3']) {
    const first = await startGatewayOver(h.store);
    const port = Number(new URL(first.base).port);
    await first.close();
    const out = join(dir, `restart-${parallel}.json`);
    const child = spawn(process.execPath, [CLI, 'export', '--url', first.base, ...TABLE, '--parallel', parallel, '--out', out], {
      cwd: ROOT,
      stdio: ['ignore', 'ignore', 'pipe'],
    });
    const r = { code: null as number | null, stderr: '' };
    child.stderr.on('data', (b: Buffer) => (r.stderr += b.toString('utf8')));
    const closed = new Promise<void>((resolve) => child.on('close', (code) => resolve(void (r.code = code))));
    for (let waited = 0; waited < 60_000 && !/ECONNREFUSED .*; retrying/.test(r.stderr) && r.code === null; waited += 10) await sleep(10);
    const back = await startGatewayOver(h.store, { port });
    t.teardown(() => back.close());
    await closed;
    t.equal(r.code, 0, `--parallel ${parallel}, the gateway back on port ${port}: ${r.stderr}`);
    t.match(r.stderr, /^rowgate export: http:\/\/127\.0\.0\.1:\d+: ECONNREFUSED .*; retrying in 200 ms\n/, 'each retry is told');
    t.ok(existsSync(out) && readFileSync(out, 'utf8') === full, `--parallel ${parallel}: the full scan, byte for byte`);
  }

  // A socket hang up on the layout request, then on the splits request (a gateway going down
  // with them in flight): each is asked again.
  const hungUp: string[] = [];
  const proxy = await tcpProxy(t, h.base, (client, upstream) => {
    // Every request on the connection (the client keeps connections alive), by its request line.
    client.on('data', (head: Buffer) => {
      const path = /^GET (\S+)/.exec(head.toString('latin1'))?.[1];
      if (path === undefined) return;
      const kind = path.includes('/splits') ? 'splits' : path.includes('/rows') ? 'rows' : 'layout';
      if (kind !== 'rows' && !hungUp.includes(kind)) {
        hungUp.push(kind);
        client.destroy();
        upstream.destroy();
      }
    });
    upstream.on('data', (data: Buffer) => client.write(data));
  });
  const r = await runCli(['export', '--url', proxy, ...TABLE, '--parallel', '3']);
  t.equal(r.code, 0, r.stderr);
  t.same(hungUp, ['layout', 'splits'], 'both early requests were hung up on once');
  t.equal(r.stderr.match(/ECONNRESET .*; retrying in 200 ms\n/g)?.length, 2, `two retries told: ${r.stderr}`);
  t.ok(r.stdout === full, 'the full scan, byte for byte');

  // A gateway that does not come back is given up on, in bounded time, naming why.
  const gone = await startGatewayOver(h.store);
  await gone.close();
  const started = Date.now();
  const g = await runCli(['export', '--url', gone.base, ...TABLE, '--out', join(dir, 'gone.json')]);
  t.equal(g.code, 1);
  t.match(g.stderr, /ECONNREFUSED.*gave up after 6 attempts/);
  t.ok(Date.now() - started < 20_000, `given up after ${Date.now() - started} ms`);
  t.notOk(existsSync(join(dir, 'gone.json.partial')), 'no partial file left');

  // Ctrl-C while it waits to retry ends it at once, as an interrupted export.
  const child = spawn(process.execPath, [CLI, 'export', '--url', gone.base, ...TABLE, '--out', join(dir, 'stopped.json')], {
    cwd: ROOT,
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  let stderr = '';
  child.stderr.on('data', (b: Buffer) => (stderr += b.toString('utf8')));
  const closed = new Promise<number | null>((resolve) => child.on('close', (code) => resolve(code)));
  for (let waited = 0; waited < 10_000 && !/retrying in 400 ms/.test(stderr); waited += 10) await sleep(10);
  const interrupted = Date.now();
  child.kill('SIGINT');
  t.equal(await closed, 130, stderr);
  t.match(stderr, /interrupted \(SIGINT\)/);
  t.ok(Date.now() - interrupted < 1000, `ended ${Date.now() - interrupted} ms after the Ctrl-C, in a 400 ms wait`);

  // The same once rows flowed: a gateway gone mid-export (its connections dropped, new ones
  // refused) is retried from the next row, and a Ctrl-C in that wait ends the export as
  // interrupted, saying how to continue.
  let down = false;
  const live = new Set<Socket>();
  const flaky = await tcpProxy(t, h.base, (client, upstream) => {
    if (down) {
      client.destroy();
      upstream.destroy();
      return;
    }
    live.add(client);
    upstream.on('data', (data: Buffer) => {
      upstream.pause();
      setTimeout(() => {
        if (!client.destroyed) client.write(data);
        upstream.resume();
      }, 20);
    });
  });
  const midOut = join(dir, 'mid.json');
  const mid = spawn(process.execPath, [CLI, 'export', '--url', flaky, ...TABLE, '--out', midOut], { cwd: ROOT, stdio: ['ignore', 'ignore', 'pipe'] });
  let midErr = '';
  mid.stderr.on('data', (b: Buffer) => (midErr += b.toString('utf8')));
  const midClosed = new Promise<number | null>((resolve) => mid.on('close', (code) => resolve(code)));
  for (let waited = 0; waited < 10_000 && !(existsSync(`${midOut}.partial`) && statSync(`${midOut}.partial`).size > 50_000); waited += 10) await sleep(10);
  down = true;
  for (const c of live) c.destroy();
  for (let waited = 0; waited < 10_000 && !/retrying from the next row in 400 ms/.test(midErr); waited += 10) await sleep(10);
  mid.kill('SIGINT');
  t.equal(await midClosed, 130, midErr);
  t.match(midErr, /interrupted \(SIGINT\)\nrowgate export: stopped after \d+ rows, kept in .*mid\.json\.partial; continue with:/);
});

t.test('--format ndjson and avro, locally and with --url --parallel; avro read back by python3-avro', async (t) => {
  const dir = tempDir(t);
  const h = await filledGateway(t, dir);
  const full = (await raw(h.base, 'GET', `${ROWS_PATH}?limit=-1`)).body;
  const local = ['--data', join(dir, 'data')];
  const remote = ['--url', h.base, '--parallel', '3'];
  for (const [what, source] of [
    ['local', local],
    ['--url --parallel 3', remote],
  ] as const) {
    const nd = await runCli(['export', ...source, ...TABLE, '--format', 'ndjson']);
    t.equal(nd.code, 0, nd.stderr);
    t.ok(nd.stdout === full.replaceAll('\r\n', '\n'), `${what} ndjson: the rows LF framed`);
    const out = join(dir, `${what.length}.avro`);
    const av = await runCli(['export', ...source, ...TABLE, '--format', 'avro', '--out', out]);
    t.equal(av.code, 0, av.stderr);
    t.equal(readFileSync(out).subarray(0, 4).toString('latin1'), 'Obj\x01');
    if (hasPythonAvro()) t.same(readWithPythonAvro(out).records, expectedAvroRecords(full), `${what} avro: python3-avro reads every row's cells back`);
  }
  if (!hasPythonAvro()) t.comment(`not read back: ${AVRO_READER_MISSING}`);
  const out = join(dir, 'resumed.ndjson');
  writeFileSync(`${out}.partial`, full.replaceAll('\r\n', '\n').slice(0, 123_457));
  const resumed = await runCli(['export', ...remote, ...TABLE, '--format', 'ndjson', '--out', out, '--resume']);
  t.equal(resumed.code, 0, resumed.stderr);
  t.equal(readFileSync(out, 'utf8'), full.replaceAll('\r\n', '\n'), 'ndjson resumes too');
  t.equal((await runCli(['export', ...remote, ...TABLE, '--format', 'avro', '--out', out, '--resume'])).code, 2, 'avro does not resume');
  t.equal((await runCli(['export', ...local, ...TABLE, '--format', 'xml'])).code, 2, 'an unknown format is bad usage');
});
