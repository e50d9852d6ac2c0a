/**
 * Query parameters per route (issue #17 item 1): every route of every revision answers a parameter
 * it does not know with the same 400 (code, exception name and message pinned here, the "known"
 * list in its order, the other revision's hint), and that check comes where it always came among
 * the request's other checks: after access control and the query string's own syntax, before
 * anything the handler looks at (the table, the body's content type, the parameters' values).
 * Revision 1's PUT takes free-form names and checks them itself.
 */
import { createHash } from 'node:crypto';
import t, { type Test } from 'tap';
import type { Revision } from '../../lib/config/config.js';
import { routesFor } from '../../lib/http/routes.js';
import { json, type RawResponse } from '../support/fixture-tables.js';
import { startInProcess } from '../support/in-process.js';

const TABLE = '/v1/instances/default/tables/sample_table';
const ROWS = `${TABLE}/rows`;

const NONE = 'none';
const rowsKnown: Record<Revision, string> = {
  1: 'eid, eids, start_rk, end_rk, limit, cols, versions, timerange',
  2: 'eid, eids, start_rk, end_rk, limit, cols, versions, timerange, freshen, timeout, fresh.<key>',
  3: 'eid, eids, start_eid, end_eid, limit, cols, versions, timerange, freshen, timeout, fresh.<key>',
};

/** method, path, the known list of its 400. */
function routes(revision: Revision): [string, string, string][] {
  return [
    ['GET', '/v1', NONE],
    ['GET', '/v1/version', NONE],
    ['GET', '/v1/openapi.json', NONE],
    ['GET', '/v1/instances', NONE],
    ['GET', '/v1/instances/default', NONE],
    ['GET', '/v1/instances/default/tables', NONE],
    ['GET', TABLE, NONE],
    ['GET', ROWS, rowsKnown[revision]],
    ['POST', ROWS, NONE],
    ['DELETE', ROWS, 'eid, eids, cols, timestamp'],
    ['GET', `${TABLE}/splits`, 'n'],
    ...(revision === 3 ? [] : ([['GET', `${TABLE}/entityId`, 'eid']] as [string, string, string][])),
    ...(revision === 1 ? ([['GET', `${ROWS}/00`, 'cols, versions, timerange']] as [string, string, string][]) : []),
  ];
}

const unknown = (name: string, revision: Revision, known: string, hint?: string) =>
  `unknown parameter ${name} for this route (the server speaks revision ${revision}; ${hint === undefined ? '' : `${hint}; `}known: ${known})`;

function isBadParameter(t: Test, r: RawResponse, exception: string, what: string): void {
  t.equal(r.status, 400, what);
  t.same(JSON.parse(r.body), { exceptionName: 'IllegalArgumentException', exception, status: 400, code: 'RG_ERR_BAD_PARAMETER' }, what);
}

for (const revision of [1, 2, 3] as Revision[]) {
  t.test(`revision ${revision}: an unknown parameter is the same 400 on every route`, async (t) => {
    const h = await startInProcess({ revision });
    t.teardown(() => h.close());
    for (const [method, path, known] of routes(revision)) {
      const body = method === 'POST' ? '[]' : undefined;
      for (const query of ['bogus=1', 'bogus', 'fresh.', 'eid=[1]&bogus=1&other=2']) {
        const r = await h.raw(method, `${path}?${query}`, body, body === undefined ? {} : json);
        // The first name the route does not know is the one named.
        const name = query === 'fresh.' ? 'fresh.' : query.startsWith('eid=') && !known.split(', ').includes('eid') ? 'eid' : 'bogus';
        isBadParameter(t, r, unknown(name, revision, known), `${method} ${path}?${query}`);
      }
      if (method === 'GET') {
        const head = await h.raw('HEAD', `${path}?bogus=1`);
        t.equal(head.status, 400, `HEAD ${path}?bogus=1`);
        t.equal(head.body, '', 'HEAD: no body');
      }
    }

    // The other revision's range parameters, with what to send instead.
    const hints: [string, string][] =
      revision === 3
        ? [
            ['start_rk', 'a hex row key bound is start_eid=rowkey_hex=<hex> in revision 3'],
            ['end_rk', 'a hex row key bound is end_eid=rowkey_hex=<hex> in revision 3'],
          ]
        : [
            ['start_eid', `range bounds are start_rk=<hex row key> in revision ${revision}`],
            ['end_eid', `range bounds are end_rk=<hex row key> in revision ${revision}`],
          ];
    for (const [name, hint] of hints) {
      isBadParameter(t, await h.raw('GET', `${ROWS}?${name}=00`), unknown(name, revision, rowsKnown[revision], hint), `GET rows ?${name}`);
      // Other routes give no hint.
      isBadParameter(t, await h.raw('DELETE', `${ROWS}?${name}=00`), unknown(name, revision, 'eid, eids, cols, timestamp'), `DELETE rows ?${name}`);
    }
    if (revision !== 1) {
      const r = await h.raw('GET', `${ROWS}?fresh.power=1&limit=1`);
      t.equal(r.status, 200, 'fresh.<key> is a known family of names on GET rows');
      isBadParameter(
        t,
        await h.raw('DELETE', `${ROWS}?eid=[1]&fresh.power=1`),
        unknown('fresh.power', revision, 'eid, eids, cols, timestamp'),
        'not on DELETE',
      );
    }
  });

  t.test(`revision ${revision}: the parameter check comes where it came among the other checks`, async (t) => {
    const h = await startInProcess({ revision });
    t.teardown(() => h.close());
    const known = rowsKnown[revision];
    // Before the table is looked up.
    isBadParameter(t, await h.raw('GET', '/v1/instances/default/tables/nope/rows?bogus=1'), unknown('bogus', revision, known), 'unknown table');
    isBadParameter(t, await h.raw('GET', '/v1/instances/nope?bogus=1'), unknown('bogus', revision, NONE), 'unknown instance');
    isBadParameter(t, await h.raw('GET', `${TABLE}/splits?n=0&bogus=1`), unknown('bogus', revision, 'n'), 'bad n');
    // Before the values of known parameters.
    isBadParameter(t, await h.raw('GET', `${ROWS}?limit=-5&eid=nonsense&bogus=1`), unknown('bogus', revision, known), 'bad limit and eid');
    isBadParameter(t, await h.raw('GET', `${ROWS}?eid=[1]&eids=[]&bogus=1`), unknown('bogus', revision, known), 'ambiguous');
    if (revision !== 1) isBadParameter(t, await h.raw('GET', `${ROWS}?freshen=maybe&bogus=1`), unknown('bogus', revision, known), 'bad freshen');
    isBadParameter(t, await h.raw('DELETE', `${ROWS}?bogus=1`), unknown('bogus', revision, 'eid, eids, cols, timestamp'), 'DELETE naming no rows');
    // Before the body's content type and content.
    isBadParameter(t, await h.raw('POST', `${ROWS}?bogus=1`, '{}', { 'content-type': 'text/plain' }), unknown('bogus', revision, NONE), '415 later');
    isBadParameter(t, await h.raw('POST', `${ROWS}?bogus=1`, 'not json', json), unknown('bogus', revision, NONE), 'bad body later');
    // After the query string's own syntax: a repeated or badly encoded parameter is named as such.
    const twice = await h.raw('GET', `${ROWS}?bogus=1&bogus=2`);
    isBadParameter(t, twice, 'parameter bogus is given more than once', 'repeated');
    const encoding = await h.raw('GET', `${ROWS}?bogus=1&eid=%zz`);
    isBadParameter(t, encoding, 'value of parameter eid has invalid percent-encoding: "%zz"', 'bad percent-encoding');
    // After routing: an unknown route or method is that, whatever the parameters.
    t.equal((await h.raw('GET', '/v1/nothing?bogus=1')).status, 404);
    t.equal((await h.raw('PATCH', `${ROWS}?bogus=1`)).status, 405);
  });

  t.test(`revision ${revision}: access control comes before the parameter check`, async (t) => {
    const token = 'reader-secret-token';
    const sha256 = createHash('sha256').update(token).digest('hex');
    const h = await startInProcess({ revision, auth: { tokens: [{ name: 'reader', sha256, scopes: { default: 'read' } }] } });
    t.teardown(() => h.close());
    const auth = { authorization: `Bearer ${token}` };
    t.equal((await h.raw('GET', `${ROWS}?bogus=1`)).status, 401, 'no token');
    t.equal((await h.raw('DELETE', `${ROWS}?bogus=1`, undefined, auth)).status, 403, 'read token on a write');
    const readOnly = await startInProcess({ revision, readOnly: true });
    t.teardown(() => readOnly.close());
    t.equal((await readOnly.raw('DELETE', `${ROWS}?bogus=1`)).status, 403, 'read-only gateway');
    isBadParameter(t, await h.raw('GET', `${ROWS}?bogus=1`, undefined, auth), unknown('bogus', revision, rowsKnown[revision]), 'with a token');
  });
}

for (const revision of [1, 2, 3] as Revision[]) {
  t.test(`revision ${revision}: every parameter a route entry names is known to the route`, async (t) => {
    const h = await startInProcess({ revision });
    t.teardown(() => h.close());
    const concrete = (path: string) => path.replace(':instance', 'default').replace(':table', 'sample_table').replace(':hexEntityId', '00');
    t.same(
      routesFor(revision)
        .map((r) => `${r.method} ${concrete(r.path)}`)
        .sort(),
      [...routes(revision).map(([method, path]) => `${method} ${path}`), ...(revision === 1 ? [`PUT ${ROWS}/00`] : [])].sort(),
      'the routes probed above are the served ones',
    );
    for (const route of routesFor(revision)) {
      const path = concrete(route.path);
      const body = route.method === 'POST' ? '[]' : undefined;
      for (const name of [...route.query.names, ...(route.query.prefix === undefined ? [] : [`${route.query.prefix}key`])]) {
        const r = await h.raw(route.method, `${path}?${name}=1`, body, body === undefined ? {} : json);
        t.notMatch(r.body, /unknown parameter|is not one of/, `${route.method} ${route.path} takes ${name}`);
      }
    }
  });
}

t.test('revision 1 PUT takes free-form names and checks them itself', async (t) => {
  const h = await startInProcess({ revision: 1 });
  t.teardown(() => h.close());
  const conv = await h.raw('GET', `${TABLE}/entityId?eid=${encodeURIComponent('[1]')}`);
  const hex = (JSON.parse(conv.body) as { rowKey: string }).rowKey;
  isBadParameter(
    t,
    await h.raw('PUT', `${ROWS}/${hex}?timestamp=1&bogus=1`),
    'PUT parameter "bogus" is not one of timestamp, timestamp.<family:qualifier>, schema.<family:qualifier> or <family:qualifier> (the server speaks revision 1)',
    'PUT ?bogus',
  );
  const put = await h.raw('PUT', `${ROWS}/${hex}?timestamp=1&strings:q=${encodeURIComponent('"x"')}`);
  t.equal(put.status, 200, put.body);
  // The body is refused before any parameter is looked at.
  const withBody = await h.raw('PUT', `${ROWS}/${hex}?bogus=1`, '{}', json);
  t.equal(withBody.status, 400);
  t.equal((JSON.parse(withBody.body) as { code: string }).code, 'RG_ERR_BAD_BODY');
});
