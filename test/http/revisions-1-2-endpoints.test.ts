/** What only revisions 1 and 2 have: the entityId endpoint, revision 1's single-row GET and PUT, and their row forms. */
import t from 'tap';
import { parseLayout } from '../../lib/model/layout/layout.js';
import { json, raw, RAW_TABLE_LAYOUT, rowsOf, startGateway, type Harness } from './harness.js';

const TABLES = '/v1/instances/default/tables';
const ROWS = `${TABLES}/sample_table/rows`;
const PLAYERS = `${TABLES}/players/rows`;
const q = (v: unknown) => encodeURIComponent(typeof v === 'string' ? v : JSON.stringify(v));
const code = (body: string) => (JSON.parse(body) as { code: string }).code;
const message = (body: string) => (JSON.parse(body) as { exception: string }).exception;

type Cell = { timestamp: number; value: unknown; writer_schema?: number };
type Row = { entityId: unknown; cells: Record<string, Record<string, Cell[]>> };

/** raw_table's layout (harness.ts) under another name and key format: these tables serve the row key endpoint. */
function keyedLayout(name: string, keys: object): object {
  return { ...RAW_TABLE_LAYOUT, name, keys_format: keys };
}

async function start(revision: 1 | 2): Promise<Harness> {
  const h = await startGateway({ revision });
  await h.store.createTable('default', parseLayout(keyedLayout('raw_table', { encoding: 'RAW' })));
  await h.store.createTable('default', parseLayout(keyedLayout('hash_table', { encoding: 'HASH', hash_type: 'MD5', hash_size: 16 })));
  await h.store.createTable('default', parseLayout(keyedLayout('prefix_table', { encoding: 'HASH_PREFIX', hash_type: 'MD5', hash_size: 2 })));
  return h;
}

for (const revision of [1, 2] as const) {
  t.test(`revision ${revision}: entityId endpoint`, async (t) => {
    const h = await start(revision);
    t.teardown(() => h.close());
    const rowKey = async (table: string, eid: string) => {
      const res = await raw(h.base, 'GET', `${TABLES}/${table}/entityId?eid=${q(eid)}`);
      t.equal(res.status, 200, `${table} ${eid}: ${res.body}`);
      return (JSON.parse(res.body) as { rowKey: string }).rowKey;
    };
    t.equal(await rowKey('sample_table', '[1298404763]'), '9ee9800000004d64159b', 'one LONG, hash_size 2 (the 0.4.0 documentation example)');
    t.equal(await rowKey('sample_table', '1298404763'), '9ee9800000004d64159b', 'a bare primitive is a single component');
    t.equal(await rowKey('sample_table', '[12345]'), '44018000000000003039');
    t.equal(await rowKey('players', "['seleukos', 'makedonia']"), await rowKey('players', '["seleukos","makedonia"]'), 'single or double quotes');
    t.equal(await rowKey('raw_table', 'alice'), '616c696365');
    t.equal(await rowKey('raw_table', 'hbase=hex:616c696365'), '616c696365');
    t.equal(await rowKey('hash_table', "'alice'"), '6384e2b2184bcbf58eccf10ca7a6563c');
    t.equal(await rowKey('hash_table', "['alice']"), '6384e2b2184bcbf58eccf10ca7a6563c');
    t.equal(await rowKey('hash_table', 'kiji=alice'), '6384e2b2184bcbf58eccf10ca7a6563c');
    t.equal(await rowKey('prefix_table', '"alice"'), '6384616c696365');
    t.equal(await rowKey('prefix_table', 'alice'), '6384616c696365');
    const raw200 = await raw(h.base, 'GET', `${TABLES}/sample_table/entityId?eid=[12345]`);
    t.equal(raw200.body, '{"rowKey":"44018000000000003039"}', 'unencoded, as the Python client sends it');
    for (const [query, status, c] of [
      ['', 400, 'RG_ERR_BAD_ENTITY_ID'],
      ['eid=', 400, 'RG_ERR_BAD_ENTITY_ID'],
      [`eid=${q("['x']")}`, 400, 'RG_ERR_BAD_ENTITY_ID'],
      [`eid=${q('[1, 2]')}`, 400, 'RG_ERR_BAD_ENTITY_ID'],
      [`eid=${q('[[]]')}`, 400, 'RG_ERR_WILDCARD_NOT_ALLOWED'],
      [`eid=1&cols=x`, 400, 'RG_ERR_BAD_PARAMETER'],
    ] as const) {
      const res = await raw(h.base, 'GET', `${TABLES}/sample_table/entityId?${query}`);
      t.equal(res.status, status, `${query}: ${res.body}`);
      t.equal(code(res.body), c, query);
    }
    t.equal((await raw(h.base, 'GET', `${TABLES}/nosuch/entityId?eid=[1]`)).status, 404);
    t.equal((await raw(h.base, 'POST', `${TABLES}/sample_table/entityId?eid=[1]`, '{}', json)).status, 405);
  });
}

t.test('revision 1: single-row GET', async (t) => {
  const h = await start(1);
  t.teardown(() => h.close());
  const post = await raw(
    h.base,
    'POST',
    ROWS,
    JSON.stringify({
      entityId: '[12345]',
      cells: { group_family: { string_qualifier: [1, 2, 3].map((ts) => ({ value: `v${ts}`, timestamp: ts })), long_qualifier: [{ value: 7, timestamp: 1 }] } },
    }),
    json,
  );
  t.same(JSON.parse(post.body), { targets: [`${ROWS}/44018000000000003039`] }, 'POST targets are the row resource');
  const get = (path: string) => raw(h.base, 'GET', path);
  const res = await get(`${ROWS}/44018000000000003039`);
  t.equal(res.status, 200);
  t.equal(res.headers['content-type'], 'application/json');
  t.equal(
    res.body,
    '{"entityId":"[12345]","cells":{"group_family":{"long_qualifier":[{"timestamp":1,"value":7}],"string_qualifier":[{"timestamp":3,"value":"v3"}]}}}',
    'one plain JSON document: no CR LF frame, shell entity id, no writer_schema',
  );
  const cells = async (query: string) =>
    ((JSON.parse((await get(`${ROWS}/44018000000000003039?${query}`)).body) as Row).cells.group_family?.string_qualifier ?? []).map((c) => c.timestamp);
  t.same(await cells('cols=group_family:string_qualifier&versions=all'), [3, 2, 1]);
  t.same(await cells('versions=2'), [3, 2]);
  t.same(await cells('versions=all&timerange=1..3'), [2, 1]);
  t.same(await cells('cols=longs'), []);
  t.same(JSON.parse((await get(`${ROWS}/44018000000000003039?cols=group_family:long_qualifier`)).body), {
    entityId: '[12345]',
    cells: { group_family: { long_qualifier: [{ timestamp: 1, value: 7 }] } },
  });
  t.equal((await get(`${ROWS}/a2378000000000000929`)).body, '{"entityId":"[2345]","cells":{}}', 'a missing row has empty cells');
  t.equal((await get(`${ROWS}/44018000000000003039/`)).status, 200, 'trailing slash');
  for (const [path, c] of [
    [`${ROWS}/zz`, 'RG_ERR_BAD_ROW_KEY'],
    [`${ROWS}/440`, 'RG_ERR_BAD_ROW_KEY'],
    [`${ROWS}/4401`, 'RG_ERR_BAD_ROW_KEY'],
    [`${ROWS}/44018000000000003039?versions=0`, 'RG_ERR_BAD_VERSIONS'],
    [`${ROWS}/44018000000000003039?timerange=3..1`, 'RG_ERR_BAD_TIMERANGE'],
    [`${ROWS}/44018000000000003039?cols=nofamily`, 'RG_ERR_BAD_COLUMNS'],
    [`${ROWS}/44018000000000003039?limit=1`, 'RG_ERR_BAD_PARAMETER'],
  ] as const) {
    const r = await get(path);
    t.equal(r.status, 400, `${path}: ${r.body}`);
    t.equal(code(r.body), c, path);
  }
  t.match(message((await get(`${ROWS}/44018000000000003039?limit=1`)).body), 'revision 1');
  t.equal((await raw(h.base, 'DELETE', `${ROWS}/44018000000000003039`)).status, 405);
});

t.test('revision 1: PUT', async (t) => {
  const h = await start(1);
  t.teardown(() => h.close());
  const put = (hex: string, query: string, body?: string) => raw(h.base, 'PUT', `${ROWS}/${hex}?${query}`, body, body === undefined ? {} : json);
  const all = async (hex: string) => JSON.parse((await raw(h.base, 'GET', `${ROWS}/${hex}?versions=all`)).body) as Row;
  const K = '44018000000000003039';

  const first = await put(K, `timestamp=10&group_family:string_qualifier=${q('"hello"')}&group_family:long_qualifier=42`);
  t.equal(first.status, 200, first.body);
  t.equal(
    first.body,
    '{"entityId":"[12345]","cells":{"group_family":{"long_qualifier":[{"timestamp":10,"value":42}],"string_qualifier":[{"timestamp":10,"value":"hello"}]}}}',
  );

  const again = await put(K, `timestamp=10&group_family:string_qualifier=${q('"hello"')}&group_family:long_qualifier=42`);
  t.equal(again.body, first.body, 'repeating the PUT answers the same');
  const afterRepeat = await all(K);
  t.equal(afterRepeat.cells.group_family!.string_qualifier!.length, 1, 'and creates no new cell');
  t.equal(afterRepeat.cells.group_family!.long_qualifier!.length, 1);

  const replaced = await put(K, `timestamp=10&group_family:string_qualifier=${q('"bye"')}`);
  t.same(
    JSON.parse(replaced.body),
    { entityId: '[12345]', cells: { group_family: { string_qualifier: [{ timestamp: 10, value: 'bye' }] } } },
    'only the columns written',
  );
  const appended = await put(K, `timestamp=20&group_family:string_qualifier=raw%20text&timestamp.group_family:long_qualifier=5&group_family:long_qualifier=1`);
  t.equal(appended.status, 200, appended.body);
  t.same(
    JSON.parse(appended.body).cells.group_family,
    {
      long_qualifier: [{ timestamp: 10, value: 42 }],
      string_qualifier: [{ timestamp: 20, value: 'raw text' }],
    },
    'the most recent version of each column written; raw text taken for a string column',
  );
  const row = await all(K);
  t.same(
    row.cells.group_family!.string_qualifier!.map((c) => [c.timestamp, c.value]),
    [
      [20, 'raw text'],
      [10, 'bye'],
    ],
    'same timestamp replaced, new one appended',
  );
  t.same(
    row.cells.group_family!.long_qualifier!.map((c) => [c.timestamp, c.value]),
    [
      [10, 42],
      [5, 1],
    ],
    'timestamp.<column> overrides timestamp',
  );

  const withSchema = await put(K, `timestamp=30&group_family:long_qualifier=7&schema.group_family:long_qualifier=${q('"int"')}`);
  t.equal(withSchema.status, 200, withSchema.body);
  t.same(JSON.parse(withSchema.body).cells.group_family.long_qualifier, [{ timestamp: 30, value: 7 }], 'an int writer schema, read as the layout long');
  const record = { username: 'u', num_purchases: 9007199254740993n, nick: { string: 'n' } };
  const recordText = JSON.stringify(record, (_k, v: unknown) => (typeof v === 'bigint' ? `@${v}@` : v)).replace(/"@(\d+)@"/g, '$1');
  const rec = await put(K, `timestamp=1&group_family:inline_record=${q(recordText)}&strings:${q(':.:?&')}=${q('"odd"')}&group_family:counter=5`);
  t.equal(rec.status, 200, rec.body);
  t.match(rec.body, /"num_purchases":9007199254740993\b/, '64-bit longs stay exact');
  t.same(JSON.parse(rec.body).cells.strings, { ':.:?&': [{ timestamp: 1, value: 'odd' }] }, 'map family qualifiers may hold any character');
  t.equal(JSON.parse(rec.body).cells.group_family.counter[0].value, 5, 'a counter is set');

  for (const [query, c, mention] of [
    [`group_family:long_qualifier=1`, 'RG_ERR_BAD_TIMESTAMP', 'Timestamp is unspecified'],
    [`timestamp=1`, 'RG_ERR_BAD_PARAMETER', 'no column'],
    [`timestamp=abc&group_family:long_qualifier=1`, 'RG_ERR_BAD_TIMESTAMP', 'abc'],
    [`timestamp=1&timestamp.group_family:long_qualifier=-3&group_family:long_qualifier=1`, 'RG_ERR_BAD_TIMESTAMP', '-3'],
    [`timestamp=1&nofamily:nocolumn=1`, 'RG_ERR_UNKNOWN_COLUMN', 'nofamily:nocolumn'],
    [`timestamp=1&group_family:nocolumn=1`, 'RG_ERR_UNKNOWN_COLUMN', 'group_family:nocolumn'],
    [`timestamp=1&eid=${q('[1]')}`, 'RG_ERR_BAD_PARAMETER', 'revision 1'],
    [`timestamp=1&group_family:long_qualifier=${q('"x"')}`, 'RG_ERR_BAD_VALUE', 'long_qualifier'],
    [`timestamp=1&group_family:long_qualifier=not%20json`, 'RG_ERR_BAD_VALUE', 'not JSON'],
    [`timestamp=1&group_family:string_qualifier=123`, 'RG_ERR_BAD_VALUE', 'string_qualifier'],
    [`timestamp=1&group_family:long_qualifier=1&schema.group_family:long_qualifier=nonsense`, 'RG_ERR_BAD_SCHEMA', 'schema.group_family:long_qualifier'],
    [`timestamp=1&group_family:long_qualifier=1&schema.group_family:long_qualifier=${q('"string"')}`, 'RG_ERR_BAD_VALUE', 'long_qualifier'],
    [`timestamp=1&group_family:long_qualifier=1&timestamp.group_family:string_qualifier=3`, 'RG_ERR_BAD_PARAMETER', 'not written'],
    [`timestamp=1&group_family:long_qualifier=1&schema.nofamily:x=${q('"long"')}`, 'RG_ERR_BAD_PARAMETER', 'not written'],
  ] as const) {
    const res = await put('a2378000000000000929', query);
    t.equal(res.status, 400, `${query}: ${res.body}`);
    t.equal(code(res.body), c, query);
    t.match(message(res.body), mention, query);
  }
  t.same((await all('a2378000000000000929')).cells, {}, 'rejected PUTs wrote nothing');
  const body = await put(K, 'timestamp=1&group_family:long_qualifier=1', '{}');
  t.equal(body.status, 400);
  t.equal(code(body.body), 'RG_ERR_BAD_BODY');
  t.equal(code((await put('zz', 'timestamp=1&group_family:long_qualifier=1')).body), 'RG_ERR_BAD_ROW_KEY');
});

t.test("revision 1: scans, POST without writer_schema, other revisions' routes and parameters", async (t) => {
  const h = await start(1);
  t.teardown(() => h.close());
  const posted = await raw(
    h.base,
    'POST',
    PLAYERS,
    JSON.stringify([
      { entityId: "['seleukos', 'makedonia']", cells: { info: { email: [{ value: 's@m', timestamp: 1 }] } } },
      { entityId: '["antipater","makedonia"]', cells: { info: { email: [{ value: 'a@m', timestamp: 1 }] } } },
    ]),
    json,
  );
  t.equal(posted.status, 200, posted.body);
  const targets = (JSON.parse(posted.body) as { targets: string[] }).targets;
  t.match(targets[0], new RegExp(`^${PLAYERS}/[0-9a-f]+$`));
  const viaTarget = JSON.parse((await raw(h.base, 'GET', targets[0]!)).body) as Row;
  t.equal(viaTarget.entityId, "['seleukos', 'makedonia']", 'the target is the row resource of that row');
  const withSchema = await raw(h.base, 'POST', ROWS, JSON.stringify({ entityId: '[1]', cells: { longs: { a: [{ value: 1, writer_schema: 'long' }] } } }), json);
  t.equal(withSchema.status, 400);
  t.match(message(withSchema.body), 'revision 1');
  const arrayId = await raw(h.base, 'POST', ROWS, JSON.stringify({ entityId: [1], cells: {} }), json);
  t.equal(code(arrayId.body), 'RG_ERR_BAD_ENTITY_ID', 'revision 1 entity ids in bodies are strings');
  const wildcard = await raw(h.base, 'GET', `${PLAYERS}?eid=${q("['seleukos', []]")}`);
  t.equal(wildcard.status, 400);
  t.equal(code(wildcard.body), 'RG_ERR_WILDCARD_NOT_ALLOWED');
  t.match(message(wildcard.body), 'revision 1');
  const foreign = await raw(h.base, 'GET', `${PLAYERS}?start_eid=${q('["a","b"]')}`);
  t.equal(foreign.status, 400);
  t.match(message(foreign.body), 'revision 1');
  const put = await raw(h.base, 'PUT', `${ROWS}?timestamp=1`);
  t.equal(put.status, 405);
});

t.test('revision 2: no single-row resource; wildcards; writer_schema; POST targets by eid', async (t) => {
  const h = await start(2);
  t.teardown(() => h.close());
  for (const method of ['GET', 'PUT']) {
    const res = await raw(h.base, method, `${ROWS}/44018000000000003039?timestamp=1&longs:a=1`);
    t.equal(res.status, 404, method);
    t.equal(code(res.body), 'RG_ERR_ROUTE_NOT_FOUND');
    t.match(message(res.body), 'revision 2');
  }
  const posted = await raw(
    h.base,
    'POST',
    ROWS,
    JSON.stringify([
      { entityId: '[54323]', cells: { group_family: { long_qualifier: [{ value: 1, timestamp: 1, writer_schema: 'int' }] } } },
      { entityId: '[54324]', cells: { group_family: { long_qualifier: [{ value: 2, timestamp: 1, writer_schema: 3 }] } } },
      { entityId: '[54325]', cells: { group_family: { long_qualifier: [{ value: 3, timestamp: 1 }] } } },
    ]),
    json,
  );
  t.equal(posted.status, 200, posted.body);
  t.same(
    JSON.parse(posted.body),
    { targets: [`${ROWS}?eid=[54323]`, `${ROWS}?eid=[54324]`, `${ROWS}?eid=[54325]`] },
    'shell form, not URL-encoded, as 0.6.0 did',
  );
  const rows = rowsOf((await raw(h.base, 'GET', `${ROWS}?eids=${q(['[54323]', '[54324]', '[54325]'])}`)).body) as Row[];
  t.same(
    rows.map((r) => [r.entityId, r.cells.group_family!.long_qualifier![0]!.value, r.cells.group_family!.long_qualifier![0]!.writer_schema]),
    [
      ['[54323]', 1, 3],
      ['[54324]', 2, 3],
      ['[54325]', 3, 3],
    ],
    'eids elements in the shell form; writer_schema ids in cells',
  );
  await raw(
    h.base,
    'POST',
    PLAYERS,
    JSON.stringify(
      ['greece', 'makedonia', 'asia.central'].map((d) => ({ entityId: `['seleukos', '${d}']`, cells: { info: { email: [{ value: d, timestamp: 1 }] } } })),
    ),
    json,
  );
  await raw(
    h.base,
    'POST',
    PLAYERS,
    JSON.stringify({ entityId: "['antipater', 'makedonia']", cells: { info: { email: [{ value: 'x', timestamp: 1 }] } } }),
    json,
  );
  const seleukos = rowsOf((await raw(h.base, 'GET', `${PLAYERS}?eid=${q("['seleukos', []]")}`)).body) as Row[];
  t.same(seleukos.map((r) => r.entityId).sort(), ["['seleukos', 'asia.central']", "['seleukos', 'greece']", "['seleukos', 'makedonia']"]);
  const byDomain = rowsOf((await raw(h.base, 'GET', `${PLAYERS}?eid=${q("[[], 'makedonia']")}&limit=1`)).body);
  t.equal(byDomain.length, 1, 'wildcard scans honour limit');
  const foreign = await raw(h.base, 'GET', `${PLAYERS}?end_eid=${q('["a","b"]')}`);
  t.equal(foreign.status, 400);
  t.match(message(foreign.body), 'revision 2');
});

t.test('revision 3: the older routes are absent', async (t) => {
  const h = await startGateway({ revision: 3 });
  t.teardown(() => h.close());
  for (const [method, path] of [
    ['GET', `${TABLES}/sample_table/entityId?eid=[1]`],
    ['GET', `${ROWS}/44018000000000003039`],
    ['PUT', `${ROWS}/44018000000000003039?timestamp=1`],
  ]) {
    const res = await raw(h.base, method!, path!);
    t.equal(res.status, 404, `${method} ${path}`);
    t.equal(code(res.body), 'RG_ERR_ROUTE_NOT_FOUND');
  }
});
