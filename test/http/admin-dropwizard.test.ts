/**
 * KijiREST's Dropwizard admin endpoints on the admin listener, as its Python client calls them:
 * GET /ping -> pong, GET /metrics as JSON for a client accepting application/json (Prometheus text
 * otherwise), GET /healthcheck in Dropwizard's shape (200/500, text or JSON), and
 * POST /tasks/close?instance=I[&table=T] dropping the store's caches so the next request reloads
 * them: on LMDB (the cached objects are replaced) and on the Bigtable emulator (a layout changed
 * behind the gateway's back is served only after the task).
 */
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { Bigtable } from '@google-cloud/bigtable';
import { pino } from 'pino';
import t, { type Test } from 'tap';
import { createAdminServer } from '../../lib/admin/admin-server.js';
import type { AdminConfig } from '../../lib/config/config.js';
import { metricsTextToJson } from '../../lib/metrics/metrics-json.js';
import { BigtableStore } from '../../lib/store/bigtable/bigtable-store.js';
import type { Store } from '../../lib/store/store.js';
import { EMULATOR_MISSING, startEmulator } from '../store/bigtable-emulator.js';
import { json, raw, startGateway } from './harness.js';

type Tree = { [key: string]: Tree | number };

/**
 * The walk of KijiREST's tsdb_collector over the JSON /metrics: `.items()` on every value down to
 * numbers, the keys on the way joined into the metric's name. Anything else where it expects an
 * object or a number (a list: "'list' object has no attribute 'items'"; a string; null) fails it.
 */
function collectorWalk(tree: Record<string, Tree | number>, prefix: string[] = []): [string, number][] {
  const out: [string, number][] = [];
  for (const [key, value] of Object.entries(tree)) {
    const path = [...prefix, key];
    if (typeof value === 'number') out.push([path.join('.'), value]);
    else if (typeof value === 'object' && value !== null && !Array.isArray(value)) out.push(...collectorWalk(value, path));
    else throw new Error(`${path.join('.')}: ${JSON.stringify(value)} is neither an object nor a number`);
  }
  return out;
}

const PYTHON = ['/usr/bin/python3', '/bin/python3'].find((p) => existsSync(p));

/** The same walk in Python, over the body as json.loads reads it. */
function pythonCollectorWalk(body: string): [string, number][] {
  const script = `
import json, sys
def walk(obj, prefix):
    for k, v in obj.items():
        path = prefix + [k]
        if isinstance(v, dict):
            yield from walk(v, path)
        elif isinstance(v, (int, float)) and not isinstance(v, bool):
            yield ['.'.join(path), v]
        else:
            raise SystemExit('%s: %r is neither an object nor a number' % ('.'.join(path), v))
print(json.dumps(list(walk(json.loads(sys.stdin.read()), []))))
`;
  const r = spawnSync(PYTHON!, ['-c', script], { input: body, encoding: 'utf8' });
  if (r.status !== 0) throw new Error(`python3 could not walk the metrics: ${r.stderr}`);
  return JSON.parse(r.stdout) as [string, number][];
}

const silent = pino({ level: 'silent' });
const ADMIN: AdminConfig = { host: '127.0.0.1', port: 0, readyTimeoutMs: 500 };
const TABLE = '/v1/instances/default/tables/sample_table';
/** The Accept header Prometheus scrapers send. */
const PROMETHEUS_ACCEPT = 'application/openmetrics-text;version=1.0.0,text/plain;version=0.0.4;q=0.5,*/*;q=0.1';

async function startAdmin(t: Test, store: Store, gateway: { metrics: Parameters<typeof createAdminServer>[1]['metrics'] }): Promise<string> {
  const admin = createAdminServer(ADMIN, { store, metrics: gateway.metrics }, silent);
  const address = await admin.listen();
  t.teardown(() => admin.close());
  return `http://127.0.0.1:${address.port}`;
}

t.test('ping, metrics as JSON or text, healthcheck', async (t) => {
  const h = await startGateway();
  t.teardown(() => h.close());
  const admin = await startAdmin(t, h.gateway.context.store, h.gateway);

  const ping = await raw(admin, 'GET', '/ping');
  t.equal(ping.status, 200);
  t.equal(ping.body.trim(), 'pong', 'the stripped body is pong, as the Python client checks');
  t.match(ping.headers['content-type'], /^text\/plain/);
  t.equal((await raw(admin, 'POST', '/ping')).status, 405);

  t.equal((await raw(h.base, 'GET', `${TABLE}/rows?limit=1`)).status, 200);
  const asJson = await raw(admin, 'GET', '/metrics', undefined, { accept: 'application/json' });
  t.equal(asJson.status, 200);
  t.match(asJson.headers['content-type'], /^application\/json/);
  const metrics = JSON.parse(asJson.body) as Record<string, Tree>;
  const ROWS_ROUTE = '/v1/instances/:instance/tables/:table/rows';
  // One object per metric, a level per label value, the series' fields at the leaves.
  t.same(metrics.rowgate_http_requests_total, { [ROWS_ROUTE]: { GET: { '200': { count: 1 } } } }, 'the request is counted');
  t.same(metrics.rowgate_open_scans, { value: 0 }, 'a gauge without labels');
  const duration = (metrics.rowgate_http_request_duration_seconds as Record<string, Record<string, Tree>>)[ROWS_ROUTE]!.GET as {
    count: number;
    sum: number;
    buckets: Record<string, number>;
  };
  t.equal(duration.count, 1, 'a histogram: its count');
  t.ok(duration.sum > 0, 'its sum');
  t.equal(duration.buckets['+Inf'], 1, 'its buckets, by le');
  t.type(metrics.process_resident_memory_bytes?.value, 'number', 'process metrics too');
  // The same numbers as the text form (both are made from it).
  const text = (await raw(admin, 'GET', '/metrics')).body;
  const line = text.split('\n').find((l) => l.startsWith('rowgate_http_request_duration_seconds_sum{') && l.includes('method="GET"'))!;
  t.equal(duration.sum, Number(line.split(' ').pop()), line);
  // Walked as KijiREST's tsdb_collector walks it: .items() down to numbers.
  t.ok(collectorWalk(metrics).length > 50, 'every leaf is a number');
  if (PYTHON !== undefined) t.same(pythonCollectorWalk(asJson.body), collectorWalk(metrics), 'python3 walks it to the same numbers');
  // Any Accept listing JSON, as the Python client's requests carry it.
  t.match((await raw(admin, 'GET', '/metrics', undefined, { accept: 'text/html, application/json;q=0.9' })).headers['content-type'], /^application\/json/);
  for (const accept of [undefined, PROMETHEUS_ACCEPT, 'application/json;q=0', 'text/plain']) {
    const text = await raw(admin, 'GET', '/metrics', undefined, accept === undefined ? {} : { accept });
    t.match(text.headers['content-type'], /^text\/plain; version=0\.0\.4/, `Accept ${accept ?? '(none)'}: Prometheus text`);
    t.match(text.body, /# TYPE rowgate_http_requests_total counter/);
  }

  const health = await raw(admin, 'GET', '/healthcheck');
  t.equal(health.status, 200);
  t.match(health.headers['content-type'], /^text\/plain/);
  t.equal(health.body, '* store: OK\n', "Dropwizard's text lines");
  const healthJson = await raw(admin, 'GET', '/healthcheck', undefined, { accept: 'application/json' });
  t.same(JSON.parse(healthJson.body), { store: { healthy: true } });
  t.equal((await raw(admin, 'DELETE', '/healthcheck')).status, 405);
});

t.test('healthcheck is a 500 naming the failure when the store does not answer', async (t) => {
  const h = await startGateway();
  t.teardown(() => h.close());
  let failing = false;
  const flaky = new Proxy(h.store, {
    get(target, prop) {
      const value: unknown = Reflect.get(target, prop, target);
      if (prop === 'listInstances' && failing) return () => Promise.reject(new Error('disk on fire'));
      return typeof value === 'function' ? (value as (...a: unknown[]) => unknown).bind(target) : value;
    },
  });
  const admin = await startAdmin(t, flaky, h.gateway);
  failing = true;
  const text = await raw(admin, 'GET', '/healthcheck');
  t.equal(text.status, 500);
  t.equal(text.body, '! store: ERROR\n!  disk on fire\n');
  const asJson = await raw(admin, 'GET', '/healthcheck', undefined, { accept: 'application/json' });
  t.equal(asJson.status, 500);
  t.same(JSON.parse(asJson.body), { store: { healthy: false, message: 'disk on fire' } });
  failing = false;
  t.equal((await raw(admin, 'GET', '/healthcheck')).status, 200);
});

t.test("tasks/close drops the LMDB store's cached tables and schema table", async (t) => {
  const h = await startGateway();
  t.teardown(() => h.close());
  const admin = await startAdmin(t, h.gateway.context.store, h.gateway);
  const store = h.store;
  const sample = await store.getLayout('default', 'sample_table');
  const players = await store.getLayout('default', 'players');
  const schemas = await store.schemaTable('default');

  const table = await raw(admin, 'POST', '/tasks/close?instance=default&table=sample_table');
  t.equal(table.status, 200, table.body);
  t.equal(table.body, 'closed table sample_table of instance default\n');
  t.not(await store.getLayout('default', 'sample_table'), sample, 'the table is read again');
  t.equal(await store.getLayout('default', 'players'), players, 'other tables stay cached');
  t.equal(await store.schemaTable('default'), schemas, 'the schema table stays cached');

  const instance = await raw(admin, 'POST', '/tasks/close?instance=default');
  t.equal(instance.status, 200, instance.body);
  t.equal(instance.body, 'closed instance default\n');
  t.not(await store.getLayout('default', 'players'), players, 'every table of the instance is read again');
  t.not(await store.schemaTable('default'), schemas, 'so is its schema table');

  // The gateway keeps serving reads and writes through the reopened objects.
  const post = await raw(
    h.base,
    'POST',
    `${TABLE}/rows`,
    JSON.stringify({ entityId: [1], cells: { strings: { a: [{ value: 'after close', timestamp: 1 }] } } }),
    json,
  );
  t.equal(post.status, 200, post.body);
  t.match((await raw(h.base, 'GET', `${TABLE}/rows?eid=[1]`)).body, /after close/);
});

t.test('tasks/close refuses bad requests', async (t) => {
  const h = await startGateway();
  t.teardown(() => h.close());
  const admin = await startAdmin(t, h.gateway.context.store, h.gateway);
  const cases: [string, string, number, RegExp][] = [
    ['GET', '/tasks/close?instance=default', 405, /method GET is not allowed on \/tasks\/close/],
    ['POST', '/tasks/close', 400, /needs instance=<name>/],
    ['POST', '/tasks/close?table=sample_table', 400, /needs instance=<name>/],
    ['POST', '/tasks/close?instance=default&instance=hidden', 400, /parameter instance is given more than once/],
    ['POST', '/tasks/close?instance=default&tabel=x', 400, /unknown parameter tabel of \/tasks\/close/],
    ['POST', '/tasks/close?instance=nope', 404, /instance nope not found/],
    ['POST', '/tasks/close?instance=default&table=nope', 404, /table nope not found in instance default/],
    ['POST', '/tasks/shutdown', 404, /no admin resource \/tasks\/shutdown/],
  ];
  for (const [method, path, status, message] of cases) {
    const r = await raw(admin, method, path);
    t.equal(r.status, status, `${method} ${path}`);
    // The API's coded error body (docs/errors.md), as the gateway's own errors.
    t.match(JSON.parse(r.body), { status, code: /^RG_ERR_/, exceptionName: /Exception$/, exception: message }, `${method} ${path}`);
  }
  t.equal((await raw(admin, 'GET', '/tasks/close')).headers.allow, 'POST');
});

const emulator = await startEmulator();
if (emulator) t.teardown(() => emulator.stop());
t.test('tasks/close on Bigtable: a layout changed behind the gateway is served after the task', { skip: emulator ? false : EMULATOR_MISSING }, async (t) => {
  const store = await BigtableStore.open({ projectId: 'test', instanceId: 'close', tablePrefix: 'close' });
  const h = await startGateway({}, { store });
  t.teardown(() => h.close());
  const admin = await startAdmin(t, h.gateway.context.store, h.gateway);

  const before = JSON.parse((await raw(h.base, 'GET', TABLE)).body) as { description?: string };
  // Another tool rewrites the table's meta row (the layout record) in Bigtable.
  const meta = new Bigtable({ projectId: 'test', metricsEnabled: false }).instance('close').table('close.meta');
  const [row] = await meta.row('table/default/sample_table').get({ decode: false });
  const cell = (row.data as Record<string, Record<string, { value: Buffer }[]>>).m!.layout![0]!.value;
  const record = JSON.parse(cell.toString('utf8')) as { layout: { description?: string } };
  record.layout.description = 'changed behind the gateway';
  await meta.row('table/default/sample_table').save({ m: { layout: { value: Buffer.from(JSON.stringify(record)), timestamp: new Date() } } } as never);

  const cached = JSON.parse((await raw(h.base, 'GET', TABLE)).body) as { description?: string };
  t.equal(cached.description, before.description, 'the cached layout is served until the task');
  const close = await raw(admin, 'POST', '/tasks/close?instance=default&table=sample_table');
  t.equal(close.status, 200, close.body);
  const reloaded = JSON.parse((await raw(h.base, 'GET', TABLE)).body) as { description?: string };
  t.equal(reloaded.description, 'changed behind the gateway', 'the next request reads the layout again');
});

t.test('metricsTextToJson: nested objects down to numbers, label values as keys, histogram and summary fields, non-numbers left out', async (t) => {
  const text = [
    '# HELP a_total Requests "quoted" \\\\ and\\nnewline',
    '# TYPE a_total counter',
    'a_total{route="/x",q="a\\"b\\\\c\\nd"} 3',
    'a_total{route="/x",q="e"} 5',
    'a_total{route="__proto__",q="constructor"} 6',
    'a_total 4',
    '# HELP h Latency',
    '# TYPE h histogram',
    'h_bucket{le="0.5"} 1',
    'h_bucket{le="+Inf"} 2',
    'h_sum 0.75',
    'h_count 2',
    '# TYPE s summary',
    's{op="get",quantile="0.5"} 0.1',
    's{op="get",quantile="0.99"} NaN',
    's_sum{op="get"} 0.3',
    's_count{op="get"} 3',
    '# TYPE g gauge',
    'g{space="new"} 7',
    'u NaN',
    'v +Inf',
    '# TYPE empty gauge',
    '',
  ].join('\n');
  const json = metricsTextToJson(text);
  t.same(JSON.parse(JSON.stringify(json)), {
    a_total: { '/x': { 'a"b\\c\nd': { count: 3 }, e: { count: 5 } }, ['__proto__']: { constructor: { count: 6 } }, '': { '': { count: 4 } } },
    h: { count: 2, sum: 0.75, buckets: { '0.5': 1, '+Inf': 2 } },
    s: { get: { count: 3, sum: 0.3, quantiles: { '0.5': 0.1 } } },
    g: { new: { value: 7 } },
    u: {},
    v: {},
    empty: {},
  });
  t.same(collectorWalk(json as Record<string, Tree>), [
    ['a_total./x.a"b\\c\nd.count', 3],
    ['a_total./x.e.count', 5],
    ['a_total.__proto__.constructor.count', 6],
    ['a_total...count', 4],
    ['h.buckets.0.5', 1],
    ['h.buckets.+Inf', 2],
    ['h.sum', 0.75],
    ['h.count', 2],
    ['s.get.quantiles.0.5', 0.1],
    ['s.get.sum', 0.3],
    ['s.get.count', 3],
    ['g.new.value', 7],
  ]);
});
