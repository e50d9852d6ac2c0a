import t from 'tap';
import { json, raw, rowsOf, startGateway, type Harness } from './harness.js';

const ROWS = '/v1/instances/default/tables/sample_table/rows';
const PLAYERS = '/v1/instances/default/tables/players/rows';
let h: Harness;

t.before(async () => {
  h = await startGateway();
});
t.teardown(async () => h.close());

const post = (path: string, body: unknown) => raw(h.base, 'POST', path, JSON.stringify(body), json);
const get = (path: string) => raw(h.base, 'GET', path);
const q = (v: unknown) => encodeURIComponent(typeof v === 'string' ? v : JSON.stringify(v));

t.test('POST then GET eid: the row comes back as revision 3 JSON with writer_schema ids', async (t) => {
  const res = await post(ROWS, {
    entityId: [12345],
    cells: {
      group_family: {
        string_qualifier: [{ value: 'some_value', timestamp: 1, writer_schema: 'string' }, { value: 'newer', timestamp: 5, writer_schema: 0 }],
        long_qualifier: [{ value: 1000, timestamp: 1, writer_schema: 'long' }],
        union_qualifier: [{ value: 'helloworld', timestamp: 1 }],
        inline_record: [{ value: { username: 'some_user', num_purchases: 10, nick: { string: 'su' } }, timestamp: 2 }],
      },
      strings: { 'apple iphone': [{ value: 'iphone', timestamp: 3 }] },
    },
  });
  t.equal(res.status, 200, res.body);
  t.same(JSON.parse(res.body), { targets: [`${ROWS}?eid=${q('[12345]')}`] });
  const row = await get(`${ROWS}?eid=${q([12345])}&versions=all`);
  t.equal(row.status, 200);
  t.equal(row.headers['content-type'], 'application/json');
  const [r] = rowsOf(row.body) as { entityId: unknown; cells: Record<string, Record<string, { timestamp: number; value: unknown; writer_schema: number }[]>> }[];
  t.same(r!.entityId, [12345]);
  t.same(Object.keys(r!.cells), ['group_family', 'strings']);
  t.same(Object.keys(r!.cells.group_family!), ['inline_record', 'long_qualifier', 'string_qualifier', 'union_qualifier'], 'qualifiers sorted');
  t.same(r!.cells.group_family!.string_qualifier!.map((c) => [c.timestamp, c.value, c.writer_schema]), [[5, 'newer', 0], [1, 'some_value', 0]]);
  t.same(r!.cells.group_family!.long_qualifier, [{ timestamp: 1, value: 1000, writer_schema: 3 }]);
  t.equal(r!.cells.group_family!.union_qualifier![0]!.value, 'helloworld', 'top-level union value is bare');
  t.same(r!.cells.group_family!.inline_record![0]!.value, { username: 'some_user', num_purchases: 10, nick: { string: 'su' } }, 'unions inside records are wrapped');
  t.match(row.body, /^\{"entityId":\[12345\],"cells":\{"group_family":\{"inline_record":\[\{"timestamp":2,"value":/, 'compact JSON, field order entityId, cells; timestamp, value, writer_schema');
});

t.test('a missing row asked for by eid comes back with empty cells', async (t) => {
  const res = await get(`${ROWS}?eid=${q([999999])}`);
  t.equal(res.status, 200);
  t.equal(res.body, '{"entityId":[999999],"cells":{}}\r\n');
});

t.test('values containing CR LF stay escaped inside one framed row', async (t) => {
  await post(ROWS, { entityId: [77], cells: { strings: { 'line\r\nbreak': [{ value: 'a\r\nb\nc\rd', timestamp: 1 }] } } });
  const res = await get(`${ROWS}?eid=${q([77])}`);
  t.equal(res.body.split('\r\n').length, 2, 'exactly one CR LF: the frame terminator');
  const [row] = rowsOf(res.body) as { cells: { strings: Record<string, { value: string }[]> } }[];
  t.equal(row!.cells.strings['line\r\nbreak']![0]!.value, 'a\r\nb\nc\rd');
});

t.test('scans: row-key order, limit, start_eid/end_eid bounds, zero rows is an empty 200 body', async (t) => {
  const ids = [12345, 2345, 56789, 54321, 55025];
  await post(ROWS, ids.map((id) => ({ entityId: [id], cells: { longs: { n: [{ value: id, timestamp: 1 }] } } })));
  const all = rowsOf((await get(`${ROWS}?cols=longs&limit=-1`)).body) as { entityId: number[] }[];
  // Hex keys: 56789 3e02.., 12345 4401.., 54321 76d8.., 2345 a237.., 55025 af51..
  t.same(all.map((r) => r.entityId[0]), [56789, 12345, 54321, 2345, 55025]);
  const limited = rowsOf((await get(`${ROWS}?cols=longs&limit=2`)).body) as { entityId: number[] }[];
  t.same(limited.map((r) => r.entityId[0]), [56789, 12345]);
  const ranged = rowsOf((await get(`${ROWS}?cols=longs&start_eid=${q([12345])}&end_eid=${q('rowkey_hex=a2378000000000000929')}`)).body) as { entityId: number[] }[];
  t.same(ranged.map((r) => r.entityId[0]), [12345, 54321], '[start, end) in row-key order, any entity id form');
  const none = await get(`${ROWS}?cols=longs&start_eid=${q('rowkey_hex=ffff')}`);
  t.equal(none.status, 200);
  t.equal(none.body, '');
  const zero = await get(`${ROWS}?limit=0`);
  t.equal(zero.body, '');
});

t.test('wildcard eid scans every value of a component, honouring limit', async (t) => {
  const players = [['cassander', 'greece'], ['antipater', 'makedonia'], ['seleukos', 'asia.central'], ['seleukos', 'makedonia']];
  const res = await post(PLAYERS, players.map((p) => ({ entityId: p, cells: { info: { email: [{ value: `${p[0]}@${p[1]}`, timestamp: 1 }] } } })));
  t.equal(res.status, 200, res.body);
  const seleukos = rowsOf((await get(`${PLAYERS}?eid=${q(['seleukos', []])}`)).body) as { entityId: string[] }[];
  t.same(seleukos.map((r) => r.entityId), [['seleukos', 'asia.central'], ['seleukos', 'makedonia']]);
  const one = rowsOf((await get(`${PLAYERS}?eid=${q(['seleukos', []])}&limit=1`)).body);
  t.equal(one.length, 1);
  const byDomain = rowsOf((await get(`${PLAYERS}?eid=${encodeURIComponent("[[], 'makedonia']")}`)).body) as { entityId: string[] }[];
  t.same(byDomain.map((r) => r.entityId[0]).sort(), ['antipater', 'seleukos'], 'single quotes accepted in URL entity ids');
});

t.test('bulk get eids returns each requested row once, in request order', async (t) => {
  const res = await get(`${ROWS}?cols=longs&eids=${q([[12345], [2345], 'rowkey_hex=44018000000000003039', [424242]])}`);
  t.equal(res.status, 200, res.body);
  const rows = rowsOf(res.body) as { entityId: number[]; cells: object }[];
  t.same(rows.map((r) => r.entityId[0]), [12345, 2345, 424242]);
  t.same(rows[2]!.cells, {});
});

t.test('cols, versions and timerange select cells; bad values are 400s naming the input', async (t) => {
  await post(ROWS, { entityId: [1], cells: { group_family: { string_qualifier: [1, 2, 3, 4, 5, 6].map((ts) => ({ value: `v${ts}`, timestamp: ts })) } } });
  const cells = async (query: string) => {
    const [row] = rowsOf((await get(`${ROWS}?eid=${q([1])}&${query}`)).body) as { cells: { group_family?: { string_qualifier: { timestamp: number }[] } } }[];
    return row!.cells.group_family?.string_qualifier.map((c) => c.timestamp) ?? [];
  };
  t.same(await cells('versions=3'), [6, 5, 4]);
  t.same(await cells('versions=all&timerange=2..4'), [3, 2]);
  t.same(await cells('versions=all&timerange=5..'), [6, 5]);
  t.same(await cells('versions=all&timerange=..3'), [2, 1]);
  t.same(await cells('cols=longs'), []);
  for (const [query, code, mention] of [
    ['versions=0', 'RG_ERR_BAD_VERSIONS', '0'],
    ['versions=abc', 'RG_ERR_BAD_VERSIONS', 'abc'],
    ['timerange=5..5', 'RG_ERR_BAD_TIMERANGE', '5..5'],
    ['timerange=a..b', 'RG_ERR_BAD_TIMERANGE', 'a..b'],
    ['cols=group_familyy', 'RG_ERR_BAD_COLUMNS', 'group_familyy'],
    ['cols=group_family:nope', 'RG_ERR_BAD_COLUMNS', 'nope'],
    ['limit=-2', 'RG_ERR_BAD_LIMIT', '-2'],
    ['limit=ten', 'RG_ERR_BAD_LIMIT', 'ten'],
    ['start_rk=00', 'RG_ERR_BAD_PARAMETER', 'start_rk'],
  ] as const) {
    const res = await get(`${ROWS}?eid=${q([1])}&${query}`);
    t.equal(res.status, 400, query);
    const body = JSON.parse(res.body) as { code: string; exception: string; status: number; exceptionName: string };
    t.equal(body.code, code, query);
    t.equal(body.status, 400);
    t.ok(body.exception.includes(mention), `${query}: message ${JSON.stringify(body.exception)} names ${mention}`);
  }
});

t.test('entity id errors are 400s: malformed, wrong component count or type, wildcard where not allowed, ambiguous', async (t) => {
  for (const [query, code] of [
    [`eid=${q('[[]')}`, 'RG_ERR_BAD_ENTITY_ID'],
    [`eid=${q('[[123]]')}`, 'RG_ERR_BAD_ENTITY_ID'],
    [`eid=${q('12345')}`, 'RG_ERR_BAD_ENTITY_ID'],
    [`eid=${q('["x"]')}`, 'RG_ERR_BAD_ENTITY_ID'],
    [`eid=${q('[1,2]')}`, 'RG_ERR_BAD_ENTITY_ID'],
    [`eid=${q('rowkey_hex=zz')}`, 'RG_ERR_BAD_ROW_KEY'],
    [`start_eid=${q('[[]]')}`, 'RG_ERR_WILDCARD_NOT_ALLOWED'],
    [`eids=${q('[[[]]]')}`, 'RG_ERR_WILDCARD_NOT_ALLOWED'],
    [`eids=${q('{"a":1}')}`, 'RG_ERR_BAD_ENTITY_ID'],
    [`eid=${q('[1]')}&start_eid=${q('[2]')}`, 'RG_ERR_AMBIGUOUS_REQUEST'],
    [`eid=${q('[1]')}&eids=${q('[[2]]')}`, 'RG_ERR_AMBIGUOUS_REQUEST'],
    [`eid=%E0%A4%A`, 'RG_ERR_BAD_PARAMETER'],
    [`eid=1&eid=2`, 'RG_ERR_BAD_PARAMETER'],
  ] as const) {
    const res = await get(`${ROWS}?${query}`);
    t.equal(res.status, 400, `${query}: ${res.body}`);
    t.equal((JSON.parse(res.body) as { code: string }).code, code, query);
  }
});

t.test('the Python client sends entity ids unencoded; they work', async (t) => {
  const res = await get(`${ROWS}?eid=[12345]&cols=longs`);
  t.equal(res.status, 200);
  t.same((rowsOf(res.body)[0] as { entityId: number[] }).entityId, [12345]);
});

t.test('counters: an integer sets, {"incr": n} increments atomically', async (t) => {
  const counter = (value: unknown, extra: object = {}) => post(ROWS, { entityId: [5], cells: { group_family: { counter: [{ value, ...extra }] } } });
  t.equal((await counter(0, { timestamp: 0 })).status, 200);
  const results = await Promise.all(Array.from({ length: 20 }, () => counter({ incr: 5 })));
  t.ok(results.every((r) => r.status === 200));
  t.equal((await counter({ incr: -1 })).status, 200);
  const [row] = rowsOf((await get(`${ROWS}?eid=${q([5])}&cols=group_family:counter&versions=all`)).body) as { cells: { group_family: { counter: { value: number; writer_schema: number }[] } } }[];
  t.same(row!.cells.group_family.counter.map((c) => [c.value, c.writer_schema]), [[99, 3]]);
  const bad = await counter('five');
  t.equal(bad.status, 400);
  t.equal((JSON.parse(bad.body) as { code: string }).code, 'RG_ERR_BAD_COUNTER');
  const withTimestamp = await counter({ incr: 1 }, { timestamp: 5 });
  t.equal(withTimestamp.status, 400);
});

t.test('DELETE removes rows, columns, and versions up to a timestamp', async (t) => {
  await post(ROWS, [10, 11, 12].map((id) => ({ entityId: [id], cells: { group_family: { string_qualifier: [1, 2, 3].map((ts) => ({ value: `v${ts}`, timestamp: ts })), long_qualifier: [{ value: 1, timestamp: 1 }] } } })));
  const del = (query: string) => raw(h.base, 'DELETE', `${ROWS}?${query}`);
  t.equal((await del(`eid=${q([10])}`)).body, 'true');
  t.equal((await del(`eid=${q([11])}&cols=group_family:string_qualifier`)).status, 200);
  t.equal((await del(`eids=${q([[12]])}&cols=group_family:string_qualifier&timestamp=2`)).status, 200);
  const rows = rowsOf((await get(`${ROWS}?eids=${q([[10], [11], [12]])}&versions=all`)).body) as { cells: { group_family?: Record<string, { timestamp: number }[]> } }[];
  t.same(rows[0]!.cells, {});
  t.same(Object.keys(rows[1]!.cells.group_family!), ['long_qualifier']);
  t.same(rows[2]!.cells.group_family!.string_qualifier!.map((c) => c.timestamp), [3]);
  const neither = await del('cols=*');
  t.equal(neither.status, 400);
  t.equal((JSON.parse(neither.body) as { code: string }).code, 'RG_ERR_AMBIGUOUS_REQUEST');
  t.equal((await del(`eid=${q([10])}&cols=nofamily`)).status, 400);
});

t.test('POST errors: body validated whole before anything is written', async (t) => {
  const cases: [unknown, string][] = [
    [{ cells: {} }, 'RG_ERR_BAD_ENTITY_ID'],
    [{ entityId: '[12345]', cells: {} }, 'RG_ERR_BAD_ENTITY_ID'],
    [{ entityId: [1], cells: { nofamily: { x: [{ value: 1 }] } } }, 'RG_ERR_UNKNOWN_COLUMN'],
    [{ entityId: [1], cells: { group_family: { nocolumn: [{ value: 1 }] } } }, 'RG_ERR_UNKNOWN_COLUMN'],
    [{ entityId: [1], cells: { group_family: { long_qualifier: [{ value: 'not a long' }] } } }, 'RG_ERR_BAD_VALUE'],
    [{ entityId: [1], cells: { group_family: { long_qualifier: [{ value: 1, writer_schema: 999 }] } } }, 'RG_ERR_UNKNOWN_SCHEMA_ID'],
    [{ entityId: [1], cells: { group_family: { long_qualifier: [{ value: 1, writer_schema: { type: 'nonsense' } }] } } }, 'RG_ERR_BAD_SCHEMA'],
    [{ entityId: [1], cells: { group_family: { long_qualifier: [{ value: 1, timestamp: -5 }] } } }, 'RG_ERR_BAD_TIMESTAMP'],
  ];
  for (const [body, code] of cases) {
    const res = await post(ROWS, [{ entityId: [4040], cells: { longs: { x: [{ value: 1, timestamp: 1 }] } } }, body]);
    t.equal(res.status, 400, JSON.stringify(body));
    const err = JSON.parse(res.body) as { code: string; exception: string };
    t.equal(err.code, code, `${JSON.stringify(body)}: ${err.exception}`);
    t.match(err.exception, /^row 1: /, 'message says which row');
  }
  const after = rowsOf((await get(`${ROWS}?eid=${q([4040])}`)).body) as { cells: object }[];
  t.same(after[0]!.cells, {}, 'the valid first row of each rejected body was not written');
  const notJson = await raw(h.base, 'POST', ROWS, '{"entityId": [1], ', json);
  t.equal(notJson.status, 400);
  t.equal((JSON.parse(notJson.body) as { code: string }).code, 'RG_ERR_BAD_BODY');
  const wrongType = await raw(h.base, 'POST', ROWS, '{}', { 'content-type': 'text/plain' });
  t.equal(wrongType.status, 415);
});

t.test('a 64-bit long survives POST and GET exactly', async (t) => {
  const big = '9223372036854775807';
  const body = `{"entityId":[9223372036854775807],"cells":{"longs":{"max":[{"value":${big},"timestamp":1}]}}}`;
  const res = await raw(h.base, 'POST', ROWS, body, json);
  t.equal(res.status, 200, res.body);
  const row = await get(`${ROWS}?eid=[9223372036854775807]`);
  t.equal(row.body, `{"entityId":[9223372036854775807],"cells":{"longs":{"max":[{"timestamp":1,"value":${big},"writer_schema":3}]}}}\r\n`);
});

t.test('regression: a bulk get without limit returns every requested row, not the scan default of 100', async (t) => {
  const ids = Array.from({ length: 150 }, (_, i) => [100_000 + i]);
  const res = await get(`${ROWS}?eids=${q(ids)}`);
  t.equal(rowsOf(res.body).length, 150);
  t.equal(rowsOf((await get(`${ROWS}?eids=${q(ids)}&limit=7`)).body).length, 7, 'an explicit limit still applies');
});
