/**
 * The revision-independent suite, run under each revision: only the way entity ids are written
 * (URL parameters, POST bodies, rows) and the range parameters differ.
 */
import t from 'tap';
import { json, raw, rowsOf, startGateway, type Harness } from './harness.js';

const ROWS = '/v1/instances/default/tables/sample_table/rows';
const PLAYERS = '/v1/instances/default/tables/players/rows';
const q = (v: unknown) => encodeURIComponent(typeof v === 'string' ? v : JSON.stringify(v));

type Components = (string | number)[];

interface Form {
  readonly revision: 1 | 2 | 3;
  /** The `eid` parameter text. */
  eid(c: Components): string;
  /** `entityId` of a POSTed row. */
  body(c: Components): unknown;
  /** `entityId` of a returned row. */
  row(c: Components): unknown;
  /** Range parameters from hex row keys. */
  range(startHex?: string, endHex?: string): string;
  readonly rangeParam: string;
}

const shell = (c: Components) => `[${c.map((x) => (typeof x === 'string' ? `'${x}'` : String(x))).join(', ')}]`;

const shellForm = (revision: 1 | 2): Form => ({
  revision,
  eid: shell,
  body: shell,
  row: shell,
  range: (s, e) => [s === undefined ? '' : `start_rk=${s}`, e === undefined ? '' : `end_rk=${e}`].filter(Boolean).join('&'),
  rangeParam: 'start_rk',
});

const FORMS: Form[] = [
  shellForm(1),
  shellForm(2),
  {
    revision: 3,
    eid: (c) => JSON.stringify(c),
    body: (c) => c,
    row: (c) => c,
    range: (s, e) => [s === undefined ? '' : `start_eid=${q(`rowkey_hex=${s}`)}`, e === undefined ? '' : `end_eid=${q(`rowkey_hex=${e}`)}`].filter(Boolean).join('&'),
    rangeParam: 'start_eid',
  },
];

type Row = { entityId: unknown; cells: Record<string, Record<string, { timestamp: number; value: unknown; writer_schema?: number }[]>> };

for (const form of FORMS) {
  t.test(`revision ${form.revision}`, async (t) => {
    const h: Harness = await startGateway({ revision: form.revision });
    t.teardown(() => h.close());
    const post = (path: string, body: unknown) => raw(h.base, 'POST', path, JSON.stringify(body), json);
    const get = (path: string) => raw(h.base, 'GET', path);
    const code = (body: string) => (JSON.parse(body) as { code: string }).code;

    t.test('info endpoints', async (t) => {
      for (const path of ['/v1', '/v1/version', '/v1/instances', '/v1/instances/default', '/v1/instances/default/tables', '/v1/instances/default/tables/sample_table']) {
        const res = await get(path);
        t.equal(res.status, 200, path);
        t.equal(res.headers['content-type'], 'application/json');
        JSON.parse(res.body);
      }
      t.same(JSON.parse((await get('/v1')).body), { resources: ['version', 'instances'], service: 'rowgate' });
    });

    t.test('routing and protocol errors', async (t) => {
      for (const [method, path, status, c, body, headers] of [
        ['GET', '/v2', 404, 'RG_ERR_ROUTE_NOT_FOUND'],
        ['GET', '/v1/instances/nosuch', 404, 'RG_ERR_INSTANCE_NOT_FOUND'],
        ['GET', '/v1/instances/default/tables/nosuch/rows', 404, 'RG_ERR_TABLE_NOT_FOUND'],
        ['POST', '/v1/version', 405, 'RG_ERR_METHOD_NOT_ALLOWED'],
        ['POST', ROWS, 415, 'RG_ERR_UNSUPPORTED_MEDIA_TYPE', '{}', { 'content-type': 'text/plain' }],
        ['POST', ROWS, 400, 'RG_ERR_BAD_BODY', '{"entityId": ', json],
        ['GET', '/v1?unknown=1', 400, 'RG_ERR_BAD_PARAMETER'],
      ] as [string, string, number, string, string?, Record<string, string>?][]) {
        const res = await raw(h.base, method, path, body, headers);
        t.equal(res.status, status, `${method} ${path}: ${res.body}`);
        t.equal(code(res.body), c);
      }
    });

    t.test('POST then GET by eid; rows carry the entity id in the revision form', async (t) => {
      const res = await post(ROWS, {
        entityId: form.body([12345]),
        cells: { group_family: { string_qualifier: [{ value: 'some_value', timestamp: 1 }], long_qualifier: [{ value: 1000, timestamp: 1 }] } },
      });
      t.equal(res.status, 200, res.body);
      t.equal((JSON.parse(res.body) as { targets: string[] }).targets.length, 1);
      const got = await get(`${ROWS}?eid=${q(form.eid([12345]))}`);
      t.equal(got.status, 200, got.body);
      const [row] = rowsOf(got.body) as Row[];
      t.same(row!.entityId, form.row([12345]));
      t.same(row!.cells.group_family!.string_qualifier![0]!.value, 'some_value');
      t.equal('writer_schema' in row!.cells.group_family!.long_qualifier![0]!, form.revision !== 1, 'writer_schema only from revision 2 on');
      const missing = await get(`${ROWS}?eid=${q(form.eid([999999]))}`);
      t.equal(missing.body, `${JSON.stringify({ entityId: form.row([999999]), cells: {} })}\r\n`);
      const players = await post(PLAYERS, { entityId: form.body(['seleukos', 'makedonia']), cells: { info: { email: [{ value: 's@m', timestamp: 1 }] } } });
      t.equal(players.status, 200, players.body);
      const [p] = rowsOf((await get(`${PLAYERS}?eid=${q(form.eid(['seleukos', 'makedonia']))}`)).body) as Row[];
      t.same(p!.entityId, form.row(['seleukos', 'makedonia']));
    });

    t.test('scans: row-key order, limit, [start, end) ranges, empty results', async (t) => {
      const ids = [12345, 2345, 56789, 54321, 55025];
      t.equal((await post(ROWS, ids.map((id) => ({ entityId: form.body([id]), cells: { longs: { n: [{ value: id, timestamp: 1 }] } } })))).status, 200);
      const all = rowsOf((await get(`${ROWS}?cols=longs&limit=-1`)).body) as Row[];
      const order = [56789, 12345, 54321, 2345, 55025];
      t.same(all.map((r) => r.entityId), order.map((id) => form.row([id])));
      t.same((rowsOf((await get(`${ROWS}?cols=longs&limit=2`)).body) as Row[]).map((r) => r.entityId), order.slice(0, 2).map((id) => form.row([id])));
      const ranged = rowsOf((await get(`${ROWS}?cols=longs&${form.range('44018000000000003039', 'a2378000000000000929')}`)).body) as Row[];
      t.same(ranged.map((r) => r.entityId), [form.row([12345]), form.row([54321])]);
      const none = await get(`${ROWS}?cols=longs&${form.range('ffff')}`);
      t.equal(none.status, 200);
      t.equal(none.body, '');
      t.equal((await get(`${ROWS}?limit=0`)).body, '');
      const ambiguous = await get(`${ROWS}?eid=${q(form.eid([1]))}&${form.range('00')}`);
      t.equal(ambiguous.status, 400);
      t.equal(code(ambiguous.body), 'RG_ERR_AMBIGUOUS_REQUEST');
    });

    t.test('cols, versions and timerange; bad values are 400s', async (t) => {
      await post(ROWS, { entityId: form.body([1]), cells: { group_family: { string_qualifier: [1, 2, 3, 4, 5, 6].map((ts) => ({ value: `v${ts}`, timestamp: ts })) } } });
      const cells = async (query: string) => {
        const [row] = rowsOf((await get(`${ROWS}?eid=${q(form.eid([1]))}&${query}`)).body) as Row[];
        return row!.cells.group_family?.string_qualifier!.map((c) => c.timestamp) ?? [];
      };
      t.same(await cells('versions=3'), [6, 5, 4]);
      t.same(await cells('versions=all&timerange=2..4'), [3, 2]);
      t.same(await cells('versions=ALL&timerange=5..'), [6, 5]);
      t.same(await cells('cols=longs'), []);
      for (const [query, c] of [
        ['versions=0', 'RG_ERR_BAD_VERSIONS'],
        ['timerange=5..5', 'RG_ERR_BAD_TIMERANGE'],
        ['cols=group_familyy', 'RG_ERR_BAD_COLUMNS'],
        ['limit=-2', 'RG_ERR_BAD_LIMIT'],
      ]) {
        const res = await get(`${ROWS}?eid=${q(form.eid([1]))}&${query}`);
        t.equal(res.status, 400, query);
        t.equal(code(res.body), c, query);
      }
    });

    t.test('bulk get eids', async (t) => {
      const res = await get(`${ROWS}?cols=longs&eids=${q([[12345], [2345], [12345], [424242]])}`);
      t.equal(res.status, 200, res.body);
      const rows = rowsOf(res.body) as Row[];
      t.same(rows.map((r) => r.entityId), [form.row([12345]), form.row([2345]), form.row([424242])]);
      t.same(rows[2]!.cells, {});
    });

    t.test('DELETE rows, columns, versions', async (t) => {
      await post(ROWS, [10, 11, 12].map((id) => ({ entityId: form.body([id]), cells: { group_family: { string_qualifier: [1, 2, 3].map((ts) => ({ value: `v${ts}`, timestamp: ts })), long_qualifier: [{ value: 1, timestamp: 1 }] } } })));
      const del = (query: string) => raw(h.base, 'DELETE', `${ROWS}?${query}`);
      t.equal((await del(`eid=${q(form.eid([10]))}`)).body, 'true');
      t.equal((await del(`eid=${q(form.eid([11]))}&cols=group_family:string_qualifier`)).status, 200);
      t.equal((await del(`eids=${q([[12]])}&cols=group_family:string_qualifier&timestamp=2`)).status, 200);
      const rows = rowsOf((await get(`${ROWS}?eids=${q([[10], [11], [12]])}&versions=all`)).body) as Row[];
      t.same(rows[0]!.cells, {});
      t.same(Object.keys(rows[1]!.cells.group_family!), ['long_qualifier']);
      t.same(rows[2]!.cells.group_family!.string_qualifier!.map((c) => c.timestamp), [3]);
      t.equal(code((await del('cols=*')).body), 'RG_ERR_AMBIGUOUS_REQUEST');
    });

    t.test('counters: set and atomic increments', async (t) => {
      const counter = (value: unknown, extra: object = {}) => post(ROWS, { entityId: form.body([5]), cells: { group_family: { counter: [{ value, ...extra }] } } });
      t.equal((await counter(0, { timestamp: 0 })).status, 200);
      const results = await Promise.all(Array.from({ length: 10 }, () => counter({ incr: 3 })));
      t.ok(results.every((r) => r.status === 200));
      const [row] = rowsOf((await get(`${ROWS}?eid=${q(form.eid([5]))}&cols=group_family:counter`)).body) as Row[];
      t.equal(row!.cells.group_family!.counter![0]!.value, 30);
      t.equal(code((await counter('five')).body), 'RG_ERR_BAD_COUNTER');
    });

    t.test('parameters of another revision are a 400 naming the revision served', async (t) => {
      const foreign = form.revision === 3 ? 'start_rk=00' : `start_eid=${q('[1]')}`;
      const res = await get(`${ROWS}?${foreign}`);
      t.equal(res.status, 400);
      t.equal(code(res.body), 'RG_ERR_BAD_PARAMETER');
      t.match(JSON.parse(res.body).exception, `revision ${form.revision}`);
    });
  });
}
