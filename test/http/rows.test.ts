/**
 * Rows over HTTP under revision 3 (the default): the revision-independent suite (./suites/rows-suite.ts,
 * also run under revisions 1 and 2 by rows-revisions-1-2.test.ts and on Bigtable by
 * bigtable-rows.test.ts), then what only revision 3's JSON entity id text has.
 */
import t from 'tap';
import { json, raw, rowsOf, startGateway } from './harness.js';
import { KEYS, PLAYERS, ROWS, rowsSuite } from './suites/rows-suite.js';

const q = (v: unknown) => encodeURIComponent(typeof v === 'string' ? v : JSON.stringify(v));
const code = (body: string) => (JSON.parse(body) as { code: string }).code;

rowsSuite(t, { revision: 3, store: 'lmdb' });

t.test('revision 3 entity id text: single quotes and row key forms are accepted, a bare number or a wildcard bound is a 400', async (t) => {
  const h = await startGateway();
  t.teardown(() => h.close());
  const get = (path: string) => raw(h.base, 'GET', path);
  const players = [
    ['antipater', 'makedonia'],
    ['seleukos', 'makedonia'],
    ['seleukos', 'asia.central'],
  ];
  t.equal(
    (
      await raw(
        h.base,
        'POST',
        PLAYERS,
        JSON.stringify(players.map((p) => ({ entityId: p, cells: { info: { email: [{ value: p[0], timestamp: 1 }] } } }))),
        json,
      )
    ).status,
    200,
  );
  const byDomain = rowsOf((await get(`${PLAYERS}?eid=${encodeURIComponent("[[], 'makedonia']")}`)).body) as { entityId: string[] }[];
  t.same(byDomain.map((r) => r.entityId[0]).sort(), ['antipater', 'seleukos'], 'single quotes accepted in URL entity ids');
  const single = rowsOf((await get(`${PLAYERS}?eid=${encodeURIComponent("['seleukos', 'asia.central']")}`)).body) as { entityId: string[] }[];
  t.same(
    single.map((r) => r.entityId),
    [['seleukos', 'asia.central']],
  );

  for (const entityId of [`rowkey_hex=${KEYS[2345]}`, `hbase_hex=${KEYS[2345]}`]) {
    const res = await raw(h.base, 'POST', ROWS, JSON.stringify({ entityId, cells: { longs: { via: [{ value: 1, timestamp: 1 }] } } }), json);
    t.equal(res.status, 200, `${entityId}: ${res.body}`);
  }
  const [row] = rowsOf((await get(`${ROWS}?eid=${q([2345])}`)).body) as { entityId: unknown; cells: { longs: { via: unknown[] } } }[];
  t.same(row!.entityId, [2345], 'a row POSTed by row key is read back by its entity id');
  t.equal(row!.cells.longs.via.length, 1);

  for (const [query, c] of [
    [`eid=${q('12345')}`, 'RG_ERR_BAD_ENTITY_ID'],
    [`eid=${q('["x"]')}`, 'RG_ERR_BAD_ENTITY_ID'],
    [`start_eid=${q('[[]]')}`, 'RG_ERR_WILDCARD_NOT_ALLOWED'],
    [`end_eid=${q('[[]]')}`, 'RG_ERR_WILDCARD_NOT_ALLOWED'],
    [`eids=${q('[[[]]]')}`, 'RG_ERR_WILDCARD_NOT_ALLOWED'],
    [`eid=${q('[1]')}&end_eid=${q('[2]')}`, 'RG_ERR_AMBIGUOUS_REQUEST'],
  ] as const) {
    const res = await get(`${ROWS}?${query}`);
    t.equal(res.status, 400, `${query}: ${res.body}`);
    t.equal(code(res.body), c, query);
  }
});
