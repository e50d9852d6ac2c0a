/**
 * The admin listener: /healthz, /readyz (store reachable) and /metrics (Prometheus text) after
 * real traffic on the main listener; store errors counted; `serve` prints the admin line.
 */
import { once } from 'node:events';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pino } from 'pino';
import t, { type Test } from 'tap';
import { createAdminServer } from '../../lib/admin/admin-server.js';
import { buildConfig, type AdminConfig } from '../../lib/config/config.js';
import { createGateway } from '../../lib/http/server.js';
import { LmdbStore } from '../../lib/store/lmdb/lmdb-store.js';
import type { ChunkScan, Store } from '../../lib/store/store.js';
import { json, raw, startGateway } from './harness.js';

const TABLE = '/v1/instances/default/tables/sample_table';
const silent = pino({ level: 'silent' });
const ADMIN: AdminConfig = { host: '127.0.0.1', port: 0, readyTimeoutMs: 200 };

async function startAdmin(t: Test, store: Store, gateway: { metrics: Parameters<typeof createAdminServer>[1]['metrics'] }, config: AdminConfig = ADMIN) {
  const admin = createAdminServer(config, { store, metrics: gateway.metrics }, silent);
  const address = await admin.listen();
  t.teardown(() => admin.close());
  return `http://127.0.0.1:${address.port}`;
}

/** The value of one sample line of the exposition, or undefined. */
function sample(text: string, name: string, labels: Record<string, string> = {}): number | undefined {
  for (const line of text.split('\n')) {
    if (!line.startsWith(name)) continue;
    const m = /^([a-zA-Z_:][\w:]*)(?:\{(.*)\})? (\S+)$/.exec(line);
    if (!m || m[1] !== name) continue;
    const have = Object.fromEntries([...(m[2] ?? '').matchAll(/(\w+)="((?:[^"\\]|\\.)*)"/g)].map((x) => [x[1], x[2]]));
    if (Object.entries(labels).every(([k, v]) => have[k] === v)) return Number(m[3]);
  }
  return undefined;
}

t.test('healthz, readyz and metrics after some requests', async (t) => {
  const h = await startGateway();
  t.teardown(() => h.close());
  const admin = await startAdmin(t, h.gateway.context.store, h.gateway);

  const health = await raw(admin, 'GET', '/healthz');
  t.equal(health.status, 200);
  t.equal(JSON.parse(health.body).status, 'ok');
  const ready = await raw(admin, 'GET', '/readyz');
  t.equal(ready.status, 200);
  t.same(JSON.parse(ready.body), { status: 'ready', store: 'lmdb' });
  // The API's coded error body, as every other error of the gateway (docs/errors.md).
  const nope = await raw(admin, 'GET', '/nope');
  t.equal(nope.status, 404);
  t.same(Object.keys(JSON.parse(nope.body)).sort(), ['code', 'exception', 'exceptionName', 'status']);
  t.match(JSON.parse(nope.body), { status: 404, code: 'RG_ERR_ROUTE_NOT_FOUND', exception: /no admin resource \/nope \(try \/healthz/ });
  const wrong = await raw(admin, 'POST', '/metrics');
  t.equal(wrong.status, 405);
  t.equal(wrong.headers.allow, 'GET, HEAD');
  t.match(JSON.parse(wrong.body), { status: 405, code: 'RG_ERR_METHOD_NOT_ALLOWED', exception: /method POST is not allowed on \/metrics/ });

  const rows = Array.from({ length: 5 }, (_, i) => ({ entityId: [i], cells: { strings: { q: [{ value: `v${i}`, timestamp: 1 }] } } }));
  t.equal((await raw(h.base, 'POST', `${TABLE}/rows`, JSON.stringify(rows), json)).status, 200);
  for (let i = 0; i < 3; i++) t.equal((await raw(h.base, 'GET', `${TABLE}/rows`)).status, 200);
  t.equal((await raw(h.base, 'GET', `${TABLE}/rows?limit=x`)).status, 400);
  t.equal((await raw(h.base, 'GET', '/v1/no/such/route')).status, 404);

  const m = await raw(admin, 'GET', '/metrics');
  t.equal(m.status, 200);
  t.match(m.headers['content-type'], /^text\/plain; version=0\.0\.4/);
  const text = m.body;
  const route = '/v1/instances/:instance/tables/:table/rows';
  t.equal(sample(text, 'rowgate_http_requests_total', { route, method: 'GET', status: '200' }), 3, 'requests by route template, method and status');
  t.equal(sample(text, 'rowgate_http_requests_total', { route, method: 'GET', status: '400' }), 1);
  t.equal(sample(text, 'rowgate_http_requests_total', { route, method: 'POST', status: '200' }), 1);
  t.equal(sample(text, 'rowgate_http_requests_total', { route: 'unmatched', method: 'GET', status: '404' }), 1, 'unmatched paths share one label');
  t.notMatch(text, /no\/such\/route/, 'raw paths never become labels');
  t.equal(sample(text, 'rowgate_http_request_duration_seconds_count', { route, method: 'GET' }), 4, 'latency histogram');
  t.equal(sample(text, 'rowgate_http_request_duration_seconds_bucket', { route, method: 'GET', le: '+Inf' }), 4);
  t.equal(sample(text, 'rowgate_rows_streamed_total', { route }), 15, '3 scans of 5 rows');
  t.equal(sample(text, 'rowgate_rows_written_total', { route, method: 'POST' }), 5);
  t.ok((sample(text, 'rowgate_response_bytes_total', { route, method: 'GET' }) ?? 0) > 3 * 5 * 20, 'bytes streamed');
  t.equal(sample(text, 'rowgate_open_scans'), 0);
  t.equal(sample(text, 'rowgate_store_open_scans'), 0);
  t.match(text, /# TYPE rowgate_store_errors_total counter/);
  t.match(text, /process_resident_memory_bytes \d+/, 'process metrics too');

  // Open scans are read when scraped.
  h.gateway.context.scans.active = 2;
  t.equal(sample((await raw(admin, 'GET', '/metrics')).body, 'rowgate_open_scans'), 2);
  h.gateway.context.scans.active = 0;
});

t.test('store errors are counted; readyz fails when the store does not answer', async (t) => {
  const h = await startGateway();
  t.teardown(() => h.close());
  let mode: 'ok' | 'fail' | 'hang' = 'ok';
  // The harness store, with get (and its fast path getChunk) and listInstances failing or hanging on demand.
  const flaky = new Proxy(h.store, {
    get(target, prop) {
      const value: unknown = Reflect.get(target, prop, target);
      if ((prop === 'get' || prop === 'getChunk' || prop === 'listInstances') && typeof value === 'function') {
        return (...args: unknown[]) => {
          // getChunk (the point get's fast path) is synchronous: it fails by throwing.
          if (mode === 'fail' && prop === 'getChunk') throw new Error('disk on fire');
          if (mode === 'fail') return Promise.reject(new Error('disk on fire'));
          if (mode === 'hang') return new Promise(() => undefined);
          return (value as (...a: unknown[]) => unknown).apply(target, args);
        };
      }
      return typeof value === 'function' ? (value as (...a: unknown[]) => unknown).bind(target) : value;
    },
  });
  const gateway = createGateway(buildConfig({ port: 0, host: '127.0.0.1' }), flaky, silent);
  const address = await gateway.listen();
  t.teardown(() => gateway.close());
  const base = `http://127.0.0.1:${address.port}`;
  const admin = await startAdmin(t, gateway.context.store, gateway);

  t.equal((await raw(base, 'GET', `${TABLE}/rows?eid=[1]`)).status, 200);
  t.equal((await raw(base, 'GET', '/v1/instances/default/tables/nope/rows?eid=[1]')).status, 404);
  mode = 'fail';
  t.equal((await raw(base, 'GET', `${TABLE}/rows?eid=[1]`)).status, 500);
  const notReady = await raw(admin, 'GET', '/readyz');
  t.equal(notReady.status, 503);
  t.match(JSON.parse(notReady.body), { status: 'unavailable', error: /disk on fire/ });
  mode = 'hang';
  const started = Date.now();
  const hung = await raw(admin, 'GET', '/readyz');
  t.equal(hung.status, 503);
  t.match(JSON.parse(hung.body).error, /did not answer within 200 ms/);
  // The check hangs forever: any answer at all proves the timeout; the bound is loose for loaded CI.
  t.ok(Date.now() - started < 15_000, 'readyz answers within its timeout');
  mode = 'ok';
  t.equal((await raw(admin, 'GET', '/readyz')).status, 200);
  t.equal((await raw(admin, 'GET', '/healthz')).status, 200);

  const text = (await raw(admin, 'GET', '/metrics')).body;
  t.equal(
    sample(text, 'rowgate_store_errors_total', { operation: 'getChunk' }),
    1,
    'a failed point get (getChunk, the fast path); not-found errors are not store errors',
  );
  t.equal(sample(text, 'rowgate_store_errors_total', { operation: 'listInstances' }), 1, 'the failed readiness probe (the hung one timed out, not failed)');
  t.equal(sample(text, 'rowgate_http_requests_total', { route: '/v1/instances/:instance/tables/:table/rows', method: 'GET', status: '500' }), 1);
});

t.test('failed scanChunks batches (the LMDB scan path of GET rows and export) are store errors', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'rowgate-admin-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  // A real LMDB store whose scanChunks iterators fail on demand: at the first batch (before the
  // headers, a 500) or at the second (mid-stream, the response is cut).
  const store = new LmdbStore({ path: dir });
  const scanChunks = store.scanChunks.bind(store);
  let failAt = 0;
  store.scanChunks = (...args: Parameters<LmdbStore['scanChunks']>): ChunkScan => {
    const scan = scanChunks(...args);
    const next = scan.next.bind(scan);
    let calls = 0;
    scan.next = () => (++calls === failAt ? Promise.reject(new Error('scan worker died')) : next());
    return scan;
  };
  const h = await startGateway({}, { store });
  t.teardown(() => h.close());
  const admin = await startAdmin(t, h.gateway.context.store, h.gateway);
  const rows = Array.from({ length: 5 }, (_, i) => ({ entityId: [i], cells: { strings: { q: [{ value: `v${i}`, timestamp: 1 }] } } }));
  t.equal((await raw(h.base, 'POST', `${TABLE}/rows`, JSON.stringify(rows), json)).status, 200);

  t.equal((await raw(h.base, 'GET', `${TABLE}/rows`)).status, 200, 'a healthy scan');
  t.equal((await raw(h.base, 'GET', '/v1/instances/default/tables/nope/rows')).status, 404, 'a client error');
  let text = (await raw(admin, 'GET', '/metrics')).body;
  t.equal(sample(text, 'rowgate_store_errors_total', { operation: 'scanChunks' }), undefined, 'nothing counted yet');

  failAt = 1;
  t.equal((await raw(h.base, 'GET', `${TABLE}/rows`)).status, 500, 'the first batch failed: an error response');
  text = (await raw(admin, 'GET', '/metrics')).body;
  t.equal(sample(text, 'rowgate_store_errors_total', { operation: 'scanChunks' }), 1, 'the failed scanChunks next() is counted');
  t.equal(sample(text, 'rowgate_store_errors_total', { operation: 'scan' }), undefined, 'under its own operation label');

  failAt = 2;
  await t.rejects(raw(h.base, 'GET', `${TABLE}/rows`), 'the second batch failed: the 200 response is cut');
  text = (await raw(admin, 'GET', '/metrics')).body;
  t.equal(sample(text, 'rowgate_store_errors_total', { operation: 'scanChunks' }), 2, 'a mid-stream failure is counted too');
  t.equal(h.gateway.context.scans.active, 0);
  t.equal(h.store.openScans, 0, 'both failed scans were returned');
});

t.test('admin configuration', async (t) => {
  t.same(buildConfig({}).admin, { host: '127.0.0.1', port: 8081, readyTimeoutMs: 2000 }, 'default port 8081, host of the main listener');
  t.same(buildConfig({ host: '0.0.0.0' }).admin, { host: '0.0.0.0', port: 8081, readyTimeoutMs: 2000 });
  t.equal((buildConfig({ port: 0 }).admin as AdminConfig).port, 0, 'an ephemeral main port gets an ephemeral admin port');
  t.same(buildConfig({ admin: { port: 9100, host: '127.0.0.2' } }).admin, { host: '127.0.0.2', port: 9100, readyTimeoutMs: 2000 });
  t.equal(buildConfig({ admin: false }).admin, false);
  t.equal((buildConfig({ port: 8081 }).admin as AdminConfig).port, 8082, 'the admin port follows the main port (main + 1)');
  t.throws(() => buildConfig({ port: 8081, admin: { port: 8081 } }), /configuration admin\.port: 8081 is the port of the main listener/);
  t.throws(() => buildConfig({ admin: { port: 70000 } }), /configuration admin\.port: must be an integer/);
  t.throws(() => buildConfig({ admin: { metrics: true } }), /configuration admin\.metrics: unknown key/);
});

t.test('serve prints the listening line, then the admin line, and warns that it is open', async (t) => {
  const { ensureBuilt, startCli, tempDir } = await import('../cli/helpers.js');
  await ensureBuilt();
  const child = startCli(['serve', '--data', join(tempDir(t), 'data'), '--port', '0', '--host', '127.0.0.1']);
  t.teardown(() => {
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
  });
  let stdout = '';
  let stderr = '';
  child.stderr!.on('data', (b: Buffer) => (stderr += b.toString()));
  const lines = await new Promise<string[]>((resolve, reject) => {
    child.stdout!.on('data', (b: Buffer) => {
      stdout += b.toString();
      const all = stdout.split('\n');
      if (all.length >= 3) resolve(all.slice(0, 2));
    });
    child.once('exit', (code) => reject(new Error(`serve exited with ${code}:\n${stderr}`)));
  });
  t.match(lines[0], /^listening on http:\/\/127\.0\.0\.1:\d+$/, 'the main listening line comes first, unchanged');
  const m = /^admin listening on http:\/\/127\.0\.0\.1:(\d+)$/.exec(lines[1]!);
  t.ok(m, `admin line: ${lines[1]}`);
  const health = await raw(`http://127.0.0.1:${m![1]}`, 'GET', '/healthz');
  t.equal(health.status, 200);
  t.match(stderr, /"level":40.*no auth tokens configured: the gateway is open/, 'the open gateway is announced as a warning');
  const exited = once(child, 'exit');
  child.kill('SIGTERM');
  t.same((await exited)[0], 0);
});
