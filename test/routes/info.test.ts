import t from 'tap';
import { ERRORS, rgError } from '../../lib/errors.js';
import { json } from '../support/fixture-tables.js';
import { startInProcess } from '../support/in-process.js';

t.test('root, version, instances, metadata, tables and layouts', async (t) => {
  const h = await startInProcess();
  t.teardown(() => h.close());
  const body = async (path: string) => {
    const res = await h.raw('GET', path);
    t.equal(res.status, 200, `${path}: ${res.body}`);
    t.equal(res.headers['content-type'], 'application/json');
    return JSON.parse(res.body) as Record<string, unknown> & unknown[];
  };
  t.same(await body('/v1'), { resources: ['version', 'instances', 'openapi.json'], service: 'rowgate' });
  const version = await body('/v1/version');
  t.same(version['service-client-data-version'], { majorVersion: 2, minorVersion: 0, revision: 0, protocolName: 'system' });
  t.match(version['rest-version'], /^\d+\.\d+\.\d+$/);
  t.match(version['service-software-version'], /^\d+\.\d+\.\d+$/);
  t.same(await body('/v1/instances'), [
    { name: 'default', uri: '/v1/instances/default' },
    { name: 'hidden', uri: '/v1/instances/hidden' },
  ]);
  const meta = await body('/v1/instances/default');
  t.equal(meta.layout_version, 'system-2.0');
  t.same(
    (meta.schema_table as { entries: { id: number; avro_schema: string }[] }).entries.slice(0, 2).map((e) => [e.id, e.avro_schema]),
    [
      [0, '"string"'],
      [1, '"bytes"'],
    ],
  );
  t.same(Object.keys((meta.meta_table as { tables: object }).tables).sort(), ['players', 'sample_table']);
  t.same(await body('/v1/instances/default/tables'), [
    { name: 'players', uri: '/v1/instances/default/tables/players' },
    { name: 'sample_table', uri: '/v1/instances/default/tables/sample_table' },
  ]);
  const layout = await body('/v1/instances/default/tables/sample_table');
  t.equal(layout.name, 'sample_table');
  t.same(Object.keys(layout.keys_format as object), ['org.kiji.schema.avro.RowKeyFormat2'], 'served in the Avro JSON encoding');
  t.same(await body('/v1/instances/default/tables/sample_table/'), layout, 'a trailing slash is the same resource');
});

t.test('regression: a 4,087-character instance or table name in the path is a 404, not a 500 (fuzz seed 105114693)', async (t) => {
  const h = await startInProcess();
  t.teardown(() => h.close());
  const long = 'a'.repeat(4087);
  for (const path of [
    `/v1/instances/${long}`,
    `/v1/instances/${long}/tables`,
    `/v1/instances/default/tables/${long}`,
    `/v1/instances/default/tables/${long}/rows?eid=[1]`,
  ]) {
    const res = await h.raw('GET', path);
    t.equal(res.status, 404, `${path.slice(0, 40)}...: ${res.body.slice(0, 80)}`);
  }
});

t.test('visible instances: a configured list hides the rest (404), an empty list hides all', async (t) => {
  const h = await startInProcess({ instances: ['default'] });
  t.teardown(() => h.close());
  t.same(JSON.parse((await h.raw('GET', '/v1/instances')).body), [{ name: 'default', uri: '/v1/instances/default' }]);
  for (const path of ['/v1/instances/hidden', '/v1/instances/hidden/tables', '/v1/instances/hidden/tables/x/rows']) {
    const res = await h.raw('GET', path);
    t.equal(res.status, 404, path);
    t.equal(JSON.parse(res.body).code, 'RG_ERR_INSTANCE_NOT_FOUND');
  }
  const none = await startInProcess({ instances: [] });
  t.teardown(() => none.close());
  t.same(JSON.parse((await none.raw('GET', '/v1/instances')).body), []);
  t.equal((await none.raw('GET', '/v1/instances/default/tables')).status, 404);
});

t.test('routing and protocol errors are coded 4xx JSON errors', async (t) => {
  const h = await startInProcess({ limits: { bodyBytes: 1000, urlBytes: 2000 } });
  t.teardown(() => h.close());
  const check = async (method: string, path: string, status: number, code: string, body?: string, headers: Record<string, string> = {}) => {
    const res = await h.raw(method, path, body, headers);
    t.equal(res.status, status, `${method} ${path}: ${res.body}`);
    const err = JSON.parse(res.body) as { code: string; status: number; exceptionName: string; exception: string };
    t.equal(err.code, code);
    t.equal(err.status, status);
    t.equal(err.exceptionName, ERRORS[code as keyof typeof ERRORS].exceptionName);
    t.notMatch(res.body, /\bat \w+ \(/, 'no stack trace');
    return res;
  };
  await check('GET', '/v2', 404, 'RG_ERR_ROUTE_NOT_FOUND');
  await check('GET', '/v1/instances/nosuch', 404, 'RG_ERR_INSTANCE_NOT_FOUND');
  await check('GET', '/v1/instances/default/tables/nosuch', 404, 'RG_ERR_TABLE_NOT_FOUND');
  await check('GET', '/v1/instances/default/tables/nosuch/rows', 404, 'RG_ERR_TABLE_NOT_FOUND');
  await check('GET', '/v1/instances/default/tables/sample_table/entityId?eid=[1]', 404, 'RG_ERR_ROUTE_NOT_FOUND');
  await check('GET', '/v1/instances/default/tables/sample_table/rows/4401', 404, 'RG_ERR_ROUTE_NOT_FOUND');
  const put = await check('PUT', '/v1/instances/default/tables/sample_table/rows', 405, 'RG_ERR_METHOD_NOT_ALLOWED');
  t.equal(put.headers.allow, 'GET, HEAD, POST, DELETE');
  await check('POST', '/v1/version', 405, 'RG_ERR_METHOD_NOT_ALLOWED');
  await check('POST', '/v1/instances/default/tables/sample_table/rows', 415, 'RG_ERR_UNSUPPORTED_MEDIA_TYPE', '{}', { 'content-type': 'text/plain' });
  await check(
    'POST',
    '/v1/instances/default/tables/sample_table/rows',
    413,
    'RG_ERR_BODY_TOO_LARGE',
    JSON.stringify({ entityId: [1], cells: { strings: { a: [{ value: 'x'.repeat(2000) }] } } }),
    json,
  );
  await check('GET', `/v1?${'a'.repeat(3000)}`, 414, 'RG_ERR_URL_TOO_LONG');
  await check('GET', '/v1?unknown=1', 400, 'RG_ERR_BAD_PARAMETER');
  const after = await h.raw('GET', '/v1');
  t.equal(after.status, 200, 'the server keeps serving');
});

t.test('CORS: headers on every response and preflight answered when enabled', async (t) => {
  const h = await startInProcess({ cors: true });
  t.teardown(() => h.close());
  const res = await h.raw('GET', '/v1', undefined, { origin: 'http://example.test' });
  t.equal(res.headers['access-control-allow-origin'], '*');
  const pre = await h.raw('OPTIONS', '/v1/instances/default/tables/sample_table/rows', undefined, {
    origin: 'http://example.test',
    'access-control-request-method': 'DELETE',
  });
  t.equal(pre.status, 204);
  t.match(pre.headers['access-control-allow-methods'], /DELETE/);
});

// The registry's Retry-After as a client receives it from a real gateway (test/errors.test.ts checks
// the registry itself, without a socket, in test:unit).
t.test('a gateway whose store is unavailable answers 503 with Retry-After', async (t) => {
  const h = await startInProcess();
  t.teardown(() => h.close());
  // Before the gateway first uses it (its store proxy binds methods on first use).
  h.store.listInstances = () => Promise.reject(rgError('RG_ERR_STORE_UNAVAILABLE', 'the store cannot be reached: UNAVAILABLE'));
  const res = await h.raw('GET', '/v1/instances');
  t.equal(res.status, 503);
  t.equal(res.headers['retry-after'], '1');
  t.equal(JSON.parse(res.body).code, 'RG_ERR_STORE_UNAVAILABLE');
});
