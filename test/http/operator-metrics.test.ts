/**
 * The metrics operators ask for (docs/operations.md, "Metrics"), after real requests over
 * sockets: requests and rows per instance/table (label set bounded: only tables a request succeeded
 * on get their own series), scan durations and bytes, store latency by operation, body bytes,
 * auth failures by reason.
 */
import { readFileSync } from 'node:fs';
import t from 'tap';
import { sha256Hex } from '../../lib/http/auth.js';
import { MAX_TABLES } from '../../lib/metrics/metrics.js';
import { json, raw, startGateway } from './harness.js';
import { repoPath } from '../support/repo-root.js';

const TABLE = '/v1/instances/default/tables/sample_table';

/** Every sample of `name` whose labels include `labels`, summed (undefined when none). */
function sample(text: string, name: string, labels: Record<string, string> = {}): number | undefined {
  let sum: number | undefined;
  for (const line of text.split('\n')) {
    const m = /^([a-zA-Z_:][\w:]*)(?:\{(.*)\})? (\S+)$/.exec(line);
    if (!m || m[1] !== name) continue;
    const have = Object.fromEntries([...(m[2] ?? '').matchAll(/(\w+)="((?:[^"\\]|\\.)*)"/g)].map((x) => [x[1], x[2]]));
    if (Object.entries(labels).every(([k, v]) => have[k] === v)) sum = (sum ?? 0) + Number(m[3]);
  }
  return sum;
}

t.test('per table, scans, store latency and body bytes', async (t) => {
  const h = await startGateway();
  t.teardown(() => h.close());
  const rows = Array.from({ length: 5 }, (_, i) => ({ entityId: [i], cells: { strings: { q: [{ value: `v${i}`, timestamp: 1 }] } } }));
  const body = JSON.stringify(rows);
  t.equal((await raw(h.base, 'POST', `${TABLE}/rows`, body, json)).status, 200);
  t.equal((await raw(h.base, 'POST', `${TABLE}/rows`, body, { ...json, 'transfer-encoding': 'chunked' })).status, 200, 'the same body, chunked');
  t.equal((await raw(h.base, 'GET', `${TABLE}/rows?eid=[1]`)).status, 200);
  t.equal((await raw(h.base, 'GET', `${TABLE}/rows?eids=[[1],[2],[3]]`)).status, 200);
  t.equal((await raw(h.base, 'GET', `${TABLE}/rows`)).status, 200, 'a scan');
  t.equal((await raw(h.base, 'GET', `${TABLE}/rows?limit=x`)).status, 400);
  for (let i = 0; i < 20; i++) t.equal((await raw(h.base, 'GET', `/v1/instances/default/tables/nosuch${i}/rows`)).status, 404);

  const text = (await h.gateway.metrics.text()).body;
  const of = { instance_name: 'default', table_name: 'sample_table' };
  t.equal(sample(text, 'rowgate_table_requests_total', { ...of, access: 'read', status_class: '2xx' }), 3, 'reads that succeeded');
  t.equal(sample(text, 'rowgate_table_requests_total', { ...of, access: 'read', status_class: '4xx' }), 1, 'a read refused, on a table known to exist');
  t.equal(sample(text, 'rowgate_table_requests_total', { ...of, access: 'write', status_class: '2xx' }), 2);
  t.equal(sample(text, 'rowgate_table_rows_total', { ...of, direction: 'written' }), 10);
  t.equal(sample(text, 'rowgate_table_rows_total', { ...of, direction: 'read' }), 1 + 3 + 5);
  t.equal(
    sample(text, 'rowgate_table_requests_total', { instance_name: '-', table_name: '-', access: 'read', status_class: '4xx' }),
    20,
    'unknown tables share one series',
  );
  t.notMatch(text, /nosuch/, 'names only a client typed never become labels');
  t.ok(MAX_TABLES >= 100, 'the bound on tables with series of their own');

  t.equal(sample(text, 'rowgate_scan_duration_seconds_count'), 1, 'one streamed scan (point and bulk gets are not scans)');
  t.ok(sample(text, 'rowgate_scan_response_bytes_sum')! > 5 * 10, 'its bytes');
  t.equal(sample(text, 'rowgate_scan_response_bytes_bucket', { le: '+Inf' }), 1);
  t.ok(sample(text, 'rowgate_store_operation_seconds_count', { operation: 'getLayout' })! >= 4, 'store latency: layout lookups');
  // Store.layoutNow (the layout without a promise) is the same operation, not one of its own.
  t.equal(sample(text, 'rowgate_store_operation_seconds_count', { operation: 'layoutNow' }), undefined, 'no series for layoutNow');
  t.ok(
    sample(text, 'rowgate_store_operation_seconds_count', { operation: 'getChunk' })! >= 2 ||
      sample(text, 'rowgate_store_operation_seconds_count', { operation: 'get' })! >= 2,
    'point and bulk reads',
  );
  t.ok(
    sample(text, 'rowgate_store_operation_seconds_count', { operation: 'scanChunks' }) ??
      sample(text, 'rowgate_store_operation_seconds_count', { operation: 'scan' }),
    'scan batches',
  );
  t.equal(
    sample(text, 'rowgate_request_body_bytes_total', { route: '/v1/instances/:instance/tables/:table/rows', method: 'POST' }),
    2 * Buffer.byteLength(body),
    'body bytes: both bodies, whether their length was declared or chunked',
  );
  t.match(text, /^rowgate_open_scans 0$/m);
  // Every metric the Grafana dashboard in docs/ queries is one the gateway exports.
  const dashboard = readFileSync(repoPath('docs', 'grafana-dashboard.json'), 'utf8');
  const queried = new Set([...dashboard.matchAll(/\b((?:rowgate|process|nodejs)_\w+)/g)].map((m) => m[1]!.replace(/_(bucket|sum|count)$/, '')));
  t.ok(queried.size >= 15, `the dashboard queries ${queried.size} metrics`);
  for (const name of queried) t.match(text, new RegExp(`^# TYPE ${name} `, 'm'), `dashboard metric ${name} is exported`);
  t.match(
    text,
    /^rowgate_http_request_duration_seconds_bucket\{route="\/v1\/instances\/:instance\/tables\/:table\/rows",method="GET",le="\+Inf"\} 24$/m,
    'request durations keep their shape',
  );
});

t.test('auth failures by reason', async (t) => {
  const h = await startGateway({ auth: { tokens: [{ name: 'r', sha256: sha256Hex('tok'), scopes: { default: 'read' } }] } });
  t.teardown(() => h.close());
  t.equal((await raw(h.base, 'GET', `${TABLE}/rows?eid=[1]`)).status, 401);
  t.equal((await raw(h.base, 'GET', `${TABLE}/rows?eid=[1]`, undefined, { authorization: 'Basic x' })).status, 401);
  t.equal((await raw(h.base, 'GET', `${TABLE}/rows?eid=[1]`, undefined, { authorization: 'Bearer nope' })).status, 401);
  t.equal((await raw(h.base, 'GET', `${TABLE}/rows?eid=[1]`, undefined, { authorization: 'Bearer nope' })).status, 401);
  t.equal((await raw(h.base, 'POST', `${TABLE}/rows`, '{}', { ...json, authorization: 'Bearer tok' })).status, 403);
  t.equal((await raw(h.base, 'GET', `${TABLE}/rows?eid=[1]`, undefined, { authorization: 'Bearer tok' })).status, 200);
  const text = (await h.gateway.metrics.text()).body;
  t.equal(sample(text, 'rowgate_auth_failures_total', { reason: 'missing' }), 1);
  t.equal(sample(text, 'rowgate_auth_failures_total', { reason: 'malformed' }), 1);
  t.equal(sample(text, 'rowgate_auth_failures_total', { reason: 'unknown_token' }), 2);
  t.equal(sample(text, 'rowgate_auth_failures_total', { reason: 'scope' }), 1);
});
