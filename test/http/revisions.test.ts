/**
 * What is the same under each revision outside the row suite (which rows.test.ts and
 * rows-revisions-1-2.test.ts run under revisions 3, 1 and 2): the info endpoints, routing and
 * protocol errors (413, 414 included), CORS, and the 400 for a parameter of another revision, whose
 * message names the revision served.
 */
import t from 'tap';
import type { Revision } from '../../lib/config/config.js';
import { json, raw, startGateway, type Harness } from './harness.js';
import { FORMS } from './suites/forms.js';

const ROWS = '/v1/instances/default/tables/sample_table/rows';

for (const revision of [1, 2, 3] as Revision[]) {
  const f = FORMS[revision];
  t.test(`revision ${revision}`, async (t) => {
    const h: Harness = await startGateway({ revision, cors: true, limits: { bodyBytes: 1000, urlBytes: 2000 } });
    t.teardown(() => h.close());
    const get = (path: string) => raw(h.base, 'GET', path);
    const code = (body: string) => (JSON.parse(body) as { code: string }).code;

    t.test('info endpoints answer JSON', async (t) => {
      for (const path of [
        '/v1',
        '/v1/version',
        '/v1/instances',
        '/v1/instances/default',
        '/v1/instances/default/tables',
        '/v1/instances/default/tables/sample_table',
      ]) {
        const res = await get(path);
        t.equal(res.status, 200, path);
        t.equal(res.headers['content-type'], 'application/json');
        t.doesNotThrow(() => JSON.parse(res.body), path);
      }
      t.same(JSON.parse((await get('/v1')).body), { resources: ['version', 'instances', 'openapi.json'], service: 'rowgate' });
      t.same(
        JSON.parse((await get('/v1/instances')).body).map((i: { name: string }) => i.name),
        ['default', 'hidden'],
      );
    });

    t.test('routing and protocol errors are coded 4xx JSON errors: 404, 405, 413, 414, 415, 400', async (t) => {
      const tooLarge = JSON.stringify({ entityId: f.id([1]), cells: { strings: { a: [{ value: 'x'.repeat(2000) }] } } });
      for (const [method, path, status, c, body, headers] of [
        ['GET', '/v2', 404, 'RG_ERR_ROUTE_NOT_FOUND'],
        ['GET', '/v1/instances/nosuch', 404, 'RG_ERR_INSTANCE_NOT_FOUND'],
        ['GET', '/v1/instances/default/tables/nosuch/rows', 404, 'RG_ERR_TABLE_NOT_FOUND'],
        ['POST', '/v1/version', 405, 'RG_ERR_METHOD_NOT_ALLOWED'],
        ['POST', ROWS, 415, 'RG_ERR_UNSUPPORTED_MEDIA_TYPE', '{}', { 'content-type': 'text/plain' }],
        ['POST', ROWS, 400, 'RG_ERR_BAD_BODY', '{"entityId": ', json],
        ['POST', ROWS, 413, 'RG_ERR_BODY_TOO_LARGE', tooLarge, json],
        ['GET', `${ROWS}?eid=${encodeURIComponent(f.eid([1]))}&cols=${'a'.repeat(3000)}`, 414, 'RG_ERR_URL_TOO_LONG'],
        ['GET', '/v1?unknown=1', 400, 'RG_ERR_BAD_PARAMETER'],
      ] as [string, string, number, string, string?, Record<string, string>?][]) {
        const res = await raw(h.base, method, path, body, headers);
        t.equal(res.status, status, `${method} ${path.slice(0, 60)}: ${res.body}`);
        t.equal(code(res.body), c);
      }
      t.equal((await get('/v1')).status, 200, 'the server keeps serving');
    });

    t.test('CORS headers on row responses, and the preflight answered', async (t) => {
      const res = await raw(h.base, 'GET', `${ROWS}?eid=${encodeURIComponent(f.eid([1]))}`, undefined, { origin: 'http://example.test' });
      t.equal(res.status, 200, res.body);
      t.equal(res.headers['access-control-allow-origin'], '*');
      const pre = await raw(h.base, 'OPTIONS', ROWS, undefined, { origin: 'http://example.test', 'access-control-request-method': 'DELETE' });
      t.equal(pre.status, 204);
      t.match(pre.headers['access-control-allow-methods'], /DELETE/);
    });

    t.test('a parameter of another revision is a 400 naming the revision served', async (t) => {
      const res = await get(`${ROWS}?${f.foreignParam.query}`);
      t.equal(res.status, 400);
      t.equal(code(res.body), 'RG_ERR_BAD_PARAMETER');
      t.match(JSON.parse(res.body).exception, `revision ${revision}`);
      t.match(JSON.parse(res.body).exception, f.foreignParam.name);
    });
  });
}
