/**
 * The revision-independent HTTP row suite: reads, scans, POST, bulk get, delete and counters, with
 * their errors. Requests and expected rows go through the revision's Forms (./forms.ts), so the
 * same tests run under revisions 1, 2 and 3 (test/http/rows.test.ts, rows-revisions-1-2.test.ts)
 * and on the Bigtable store (test/http/bigtable-rows.test.ts).
 *
 * The tests share one gateway and run in order: later ones read rows earlier ones wrote.
 */
import type { Test } from 'tap';
import type { Revision } from '../../../lib/config/config.js';
import type { Store } from '../../../lib/store/store.js';
import { json, raw, rowsOf, startGateway, type Harness } from '../harness.js';
import { FORMS, type Components } from './forms.js';

export const ROWS = '/v1/instances/default/tables/sample_table/rows';
export const PLAYERS = '/v1/instances/default/tables/players/rows';

/** Hex row keys of sample_table rows (one LONG, hash_size 2), in row-key order. */
export const KEYS = {
  56789: '3e02800000000000ddd5',
  12345: '44018000000000003039',
  54321: '76d8800000000000d431',
  2345: 'a2378000000000000929',
  55025: 'af51800000000000d6f1',
} as const;

/**
 * The revision served, and the store: `lmdb` is a fresh store from the harness; any other store is
 * opened by `open` (once per suite; the harness creates the fixture tables in it and closes it).
 */
export type RowsSuiteOptions =
  { readonly revision: Revision; readonly store: 'lmdb' } | { readonly revision: Revision; readonly store: 'bigtable'; readonly open: () => Promise<Store> };

type Cell = { timestamp: number; value: unknown; writer_schema?: number };
type Row = { entityId: unknown; cells: Record<string, Record<string, Cell[]>> };

const q = (v: string) => encodeURIComponent(v);
const code = (body: string) => (JSON.parse(body) as { code: string }).code;

/** Registers the suite as one subtest of `t`, named after the revision and the store. */
export function rowsSuite(t: Test, options: RowsSuiteOptions): void {
  const f = FORMS[options.revision];
  void t.test(`rows suite, revision ${options.revision}, ${options.store} store`, async (t) => {
    const h: Harness = await startGateway({ revision: options.revision }, options.store === 'lmdb' ? {} : { store: await options.open() });
    t.teardown(() => h.close());
    const post = (path: string, body: unknown) => raw(h.base, 'POST', path, JSON.stringify(body), json);
    const get = (path: string) => raw(h.base, 'GET', path);
    const eid = (c: Components) => `eid=${q(f.eid(c))}`;
    const eids = (...cs: Components[]) => `eids=${q(JSON.stringify(cs.map((c) => f.bulk(c))))}`;

    t.test('POST then GET eid: the row comes back in the revision form: sorted, newest first, compact, writer_schema ids from revision 2', async (t) => {
      const res = await post(ROWS, {
        entityId: f.id([12345]),
        cells: {
          group_family: {
            string_qualifier: [
              f.post({ value: 'some_value', timestamp: 1, writer_schema: 'string' }),
              f.post({ value: 'newer', timestamp: 5, writer_schema: 0 }),
            ],
            long_qualifier: [f.post({ value: 1000, timestamp: 1, writer_schema: 'long' })],
            union_qualifier: [{ value: 'helloworld', timestamp: 1 }],
            inline_record: [{ value: { username: 'some_user', num_purchases: 10, nick: { string: 'su' } }, timestamp: 2 }],
          },
          strings: { 'apple iphone': [{ value: 'iphone', timestamp: 3 }] },
        },
      });
      t.equal(res.status, 200, res.body);
      t.same(JSON.parse(res.body), { targets: [f.target(ROWS, [12345], KEYS[12345])] });
      const row = await get(`${ROWS}?${eid([12345])}&versions=all`);
      t.equal(row.status, 200);
      t.equal(row.headers['content-type'], 'application/json');
      const [r] = rowsOf(row.body) as Row[];
      t.same(r!.entityId, f.id([12345]));
      t.same(Object.keys(r!.cells), ['group_family', 'strings']);
      t.same(Object.keys(r!.cells.group_family!), ['inline_record', 'long_qualifier', 'string_qualifier', 'union_qualifier'], 'qualifiers sorted');
      t.same(
        r!.cells.group_family!.string_qualifier!.map((c) => [c.timestamp, c.value, c.writer_schema]),
        [
          [5, 'newer', f.schema(0)],
          [1, 'some_value', f.schema(0)],
        ],
      );
      t.same(r!.cells.group_family!.long_qualifier, [f.cell(1, 1000, 3)]);
      t.equal(r!.cells.group_family!.union_qualifier![0]!.value, 'helloworld', 'top-level union value is bare');
      t.same(
        r!.cells.group_family!.inline_record![0]!.value,
        { username: 'some_user', num_purchases: 10, nick: { string: 'su' } },
        'unions inside records are wrapped',
      );
      t.ok(
        row.body.startsWith(
          `{"entityId":${f.idJson([12345])},"cells":{"group_family":{"inline_record":[{"timestamp":2,"value":{"username":"some_user","num_purchases":10,"nick":{"string":"su"}}${f.revision === 1 ? '}]' : ',"writer_schema":'}`,
        ),
        'compact JSON, field order entityId, cells; timestamp, value, writer_schema',
      );
    });

    t.test('a missing row asked for by eid comes back with empty cells', async (t) => {
      const res = await get(`${ROWS}?${eid([999999])}`);
      t.equal(res.status, 200);
      t.equal(res.body, `{"entityId":${f.idJson([999999])},"cells":{}}\r\n`);
    });

    t.test('values containing CR LF stay escaped inside one framed row', async (t) => {
      t.equal((await post(ROWS, { entityId: f.id([77]), cells: { strings: { 'line\r\nbreak': [{ value: 'a\r\nb\nc\rd', timestamp: 1 }] } } })).status, 200);
      const res = await get(`${ROWS}?${eid([77])}`);
      t.equal(res.body.split('\r\n').length, 2, 'exactly one CR LF: the frame terminator');
      const [row] = rowsOf(res.body) as Row[];
      t.equal(row!.cells.strings!['line\r\nbreak']![0]!.value, 'a\r\nb\nc\rd');
    });

    t.test('scans: row-key order, limit, [start, end) bounds, zero rows is an empty 200 body', async (t) => {
      const ids = [12345, 2345, 56789, 54321, 55025];
      t.equal(
        (
          await post(
            ROWS,
            ids.map((id) => ({ entityId: f.id([id]), cells: { longs: { n: [{ value: id, timestamp: 1 }] } } })),
          )
        ).status,
        200,
      );
      const order = [56789, 12345, 54321, 2345, 55025]; // the order of KEYS
      const all = rowsOf((await get(`${ROWS}?cols=longs&limit=-1`)).body) as Row[];
      t.same(
        all.map((r) => r.entityId),
        order.map((id) => f.id([id])),
      );
      const limited = rowsOf((await get(`${ROWS}?cols=longs&limit=2`)).body) as Row[];
      t.same(
        limited.map((r) => r.entityId),
        order.slice(0, 2).map((id) => f.id([id])),
      );
      const ranged = rowsOf((await get(`${ROWS}?cols=longs&${f.range({ hex: KEYS[12345], eid: [12345] }, { hex: KEYS[2345] })}`)).body) as Row[];
      t.same(
        ranged.map((r) => r.entityId),
        [f.id([12345]), f.id([54321])],
        '[start, end) in row-key order',
      );
      const from = rowsOf((await get(`${ROWS}?cols=longs&${f.range({ hex: KEYS[54321] })}`)).body) as Row[];
      t.same(
        from.map((r) => r.entityId),
        [54321, 2345, 55025].map((id) => f.id([id])),
        'a start bound alone',
      );
      const upTo = rowsOf((await get(`${ROWS}?cols=longs&${f.range(undefined, { hex: KEYS[54321] })}`)).body) as Row[];
      t.same(
        upTo.map((r) => r.entityId),
        [56789, 12345].map((id) => f.id([id])),
        'an end bound alone, exclusive',
      );
      const none = await get(`${ROWS}?cols=longs&${f.range({ hex: 'ffff' })}`);
      t.equal(none.status, 200);
      t.equal(none.body, '');
      const zero = await get(`${ROWS}?limit=0`);
      t.equal(zero.status, 200);
      t.equal(zero.body, '');
    });

    t.test(
      'wildcard eid scans every value of a component, honouring limit',
      { skip: f.wildcards ? false : 'revision 1 has no wildcards (revisions-1-2-endpoints.test.ts checks the 400)' },
      async (t) => {
        const players = [
          ['cassander', 'greece'],
          ['antipater', 'makedonia'],
          ['seleukos', 'asia.central'],
          ['seleukos', 'makedonia'],
        ];
        const res = await post(
          PLAYERS,
          players.map((p) => ({ entityId: f.id(p), cells: { info: { email: [{ value: `${p[0]}@${p[1]}`, timestamp: 1 }] } } })),
        );
        t.equal(res.status, 200, res.body);
        const seleukos = rowsOf((await get(`${PLAYERS}?${eid(['seleukos', []])}`)).body) as Row[];
        t.same(
          seleukos.map((r) => r.entityId),
          [f.id(['seleukos', 'asia.central']), f.id(['seleukos', 'makedonia'])],
        );
        const one = rowsOf((await get(`${PLAYERS}?${eid(['seleukos', []])}&limit=1`)).body);
        t.equal(one.length, 1);
        const byDomain = rowsOf((await get(`${PLAYERS}?${eid([[], 'makedonia'])}`)).body) as Row[];
        t.same(
          byDomain.map((r) => JSON.stringify(r.entityId)).sort(),
          [f.id(['antipater', 'makedonia']), f.id(['seleukos', 'makedonia'])].map((x) => JSON.stringify(x)).sort(),
          'a leading wildcard',
        );
      },
    );

    t.test('bulk get eids returns each requested row once, in request order, a row key form included', async (t) => {
      const res = await get(`${ROWS}?cols=longs&eids=${q(JSON.stringify([f.bulk([12345]), f.bulk([2345]), f.rowKey(KEYS[12345]), f.bulk([424242])]))}`);
      t.equal(res.status, 200, res.body);
      const rows = rowsOf(res.body) as Row[];
      t.same(
        rows.map((r) => r.entityId),
        [f.id([12345]), f.id([2345]), f.id([424242])],
      );
      t.same(rows[0]!.cells, { longs: { n: [f.cell(1, 12345, 3)] } });
      t.same(rows[2]!.cells, {});
    });

    t.test('cols, versions and timerange select cells; bad values are 400s naming the input', async (t) => {
      t.equal(
        (
          await post(ROWS, {
            entityId: f.id([1]),
            cells: { group_family: { string_qualifier: [1, 2, 3, 4, 5, 6].map((ts) => ({ value: `v${ts}`, timestamp: ts })) } },
          })
        ).status,
        200,
      );
      const cells = async (query: string) => {
        const [row] = rowsOf((await get(`${ROWS}?${eid([1])}&${query}`)).body) as Row[];
        return row!.cells.group_family?.string_qualifier!.map((c) => c.timestamp) ?? [];
      };
      t.same(await cells(''), [6], 'one version by default');
      t.same(await cells('versions=3'), [6, 5, 4]);
      t.same(await cells('versions=all&timerange=2..4'), [3, 2]);
      t.same(await cells('versions=ALL&timerange=5..'), [6, 5]);
      t.same(await cells('versions=all&timerange=..3'), [2, 1]);
      t.same(await cells('cols=longs'), []);
      t.same(await cells('cols=group_family:string_qualifier&versions=2'), [6, 5]);
      for (const [query, c, mention] of [
        ['versions=0', 'RG_ERR_BAD_VERSIONS', '0'],
        ['versions=abc', 'RG_ERR_BAD_VERSIONS', 'abc'],
        ['timerange=5..5', 'RG_ERR_BAD_TIMERANGE', '5..5'],
        ['timerange=a..b', 'RG_ERR_BAD_TIMERANGE', 'a..b'],
        ['cols=group_familyy', 'RG_ERR_BAD_COLUMNS', 'group_familyy'],
        ['cols=group_family:nope', 'RG_ERR_BAD_COLUMNS', 'nope'],
        ['limit=-2', 'RG_ERR_BAD_LIMIT', '-2'],
        ['limit=ten', 'RG_ERR_BAD_LIMIT', 'ten'],
        [f.foreignParam.query, 'RG_ERR_BAD_PARAMETER', f.foreignParam.name],
      ] as const) {
        const res = await get(`${ROWS}?${eid([1])}&${query}`);
        t.equal(res.status, 400, query);
        const body = JSON.parse(res.body) as { code: string; exception: string; status: number };
        t.equal(body.code, c, query);
        t.equal(body.status, 400);
        t.ok(body.exception.includes(mention), `${query}: message ${JSON.stringify(body.exception)} names ${mention}`);
      }
    });

    t.test('entity id errors are 400s: malformed, wrong component count or type, bad row key, wildcard where not allowed, ambiguous', async (t) => {
      for (const [query, c] of [
        [`eid=${q('[12345')}`, 'RG_ERR_BAD_ENTITY_ID'],
        [`eid=${q('[[123]]')}`, 'RG_ERR_BAD_ENTITY_ID'],
        [eid(['x']), 'RG_ERR_BAD_ENTITY_ID'],
        [eid([1, 2]), 'RG_ERR_BAD_ENTITY_ID'],
        [`eid=${q(f.rowKey('zz'))}`, 'RG_ERR_BAD_ROW_KEY'],
        [f.range({ hex: 'zz' }), 'RG_ERR_BAD_ROW_KEY'],
        [eids([[]]), 'RG_ERR_WILDCARD_NOT_ALLOWED'],
        [`eids=${q('{"a":1}')}`, 'RG_ERR_BAD_ENTITY_ID'],
        [`${eid([1])}&${f.range({ hex: KEYS[12345], eid: [2] })}`, 'RG_ERR_AMBIGUOUS_REQUEST'],
        [`${eid([1])}&${eids([2])}`, 'RG_ERR_AMBIGUOUS_REQUEST'],
        ['eid=%E0%A4%A', 'RG_ERR_BAD_PARAMETER'],
        ['eid=1&eid=2', 'RG_ERR_BAD_PARAMETER'],
      ] as const) {
        const res = await get(`${ROWS}?${query}`);
        t.equal(res.status, 400, `${query}: ${res.body}`);
        t.equal(code(res.body), c, query);
      }
    });

    t.test('entity ids sent unencoded (as the Python client does) work', async (t) => {
      const res = await get(`${ROWS}?eid=[12345]&cols=longs`);
      t.equal(res.status, 200, res.body);
      t.same(
        (rowsOf(res.body) as Row[]).map((r) => r.entityId),
        [f.id([12345])],
      );
    });

    t.test('counters: an integer sets, {"incr": n} increments atomically, an overflowing increment is a 400 and undone', async (t) => {
      const counter = (value: unknown, extra: object = {}) => post(ROWS, { entityId: f.id([5]), cells: { group_family: { counter: [{ value, ...extra }] } } });
      t.equal((await counter(0, { timestamp: 0 })).status, 200);
      const results = await Promise.all(Array.from({ length: 20 }, () => counter({ incr: 5 })));
      t.same(
        results.map((r) => r.status),
        Array(20).fill(200),
      );
      t.equal((await counter({ incr: -1 })).status, 200);
      const read = async () => {
        const res = await get(`${ROWS}?${eid([5])}&cols=group_family:counter&versions=all`);
        return { body: res.body, cells: (rowsOf(res.body) as Row[])[0]!.cells.group_family!.counter! };
      };
      t.same(
        (await read()).cells.map((c) => [c.value, c.writer_schema]),
        [[99, f.schema(3)]],
        'one cell: 0 + 20 * 5 - 1',
      );
      const bad = await counter('five');
      t.equal(bad.status, 400);
      t.equal(code(bad.body), 'RG_ERR_BAD_COUNTER');
      t.equal((await counter({ incr: 1 }, { timestamp: 5 })).status, 400, 'an increment takes no timestamp');
      const max = await raw(h.base, 'POST', ROWS, `{"entityId":${f.idJson([5])},"cells":{"group_family":{"counter":[{"value":9223372036854775807}]}}}`, json);
      t.equal(max.status, 200, max.body);
      const overflow = await counter({ incr: 1 });
      t.equal(overflow.status, 400);
      t.equal(code(overflow.body), 'RG_ERR_BAD_COUNTER');
      t.match((await read()).body, /"value":9223372036854775807[,}]/, 'the overflowing increment was undone');
    });

    t.test('DELETE removes rows, columns, and versions up to a timestamp', async (t) => {
      await post(
        ROWS,
        [10, 11, 12].map((id) => ({
          entityId: f.id([id]),
          cells: {
            group_family: { string_qualifier: [1, 2, 3].map((ts) => ({ value: `v${ts}`, timestamp: ts })), long_qualifier: [{ value: 1, timestamp: 1 }] },
          },
        })),
      );
      const del = (query: string) => raw(h.base, 'DELETE', `${ROWS}?${query}`);
      const deleted = await del(eid([10]));
      t.equal(deleted.status, 200);
      t.equal(deleted.body, 'true');
      t.equal((await del(`${eid([11])}&cols=group_family:string_qualifier`)).status, 200);
      t.equal((await del(`${eids([12])}&cols=group_family:string_qualifier&timestamp=2`)).status, 200);
      const rows = rowsOf((await get(`${ROWS}?${eids([10], [11], [12])}&versions=all`)).body) as Row[];
      t.same(
        rows.map((r) => r.entityId),
        [f.id([10]), f.id([11]), f.id([12])],
      );
      t.same(rows[0]!.cells, {});
      t.same(Object.keys(rows[1]!.cells.group_family!), ['long_qualifier']);
      t.same(
        rows[2]!.cells.group_family!.string_qualifier!.map((c) => c.timestamp),
        [3],
      );
      t.same(
        rows[2]!.cells.group_family!.long_qualifier!.map((c) => c.timestamp),
        [1],
        'a column DELETE leaves the others',
      );
      const neither = await del('cols=*');
      t.equal(neither.status, 400);
      t.equal(code(neither.body), 'RG_ERR_AMBIGUOUS_REQUEST');
      t.equal((await del(`${eid([10])}&cols=nofamily`)).status, 400);
    });

    t.test('POST errors: the body is validated whole before anything is written', async (t) => {
      const cases: [unknown, string][] = [
        [{ cells: {} }, 'RG_ERR_BAD_ENTITY_ID'],
        [{ entityId: f.foreignId([12345]), cells: {} }, 'RG_ERR_BAD_ENTITY_ID'],
        [{ entityId: f.id(['x']), cells: {} }, 'RG_ERR_BAD_ENTITY_ID'],
        [{ entityId: f.id([1]), cells: { nofamily: { x: [{ value: 1 }] } } }, 'RG_ERR_UNKNOWN_COLUMN'],
        [{ entityId: f.id([1]), cells: { group_family: { nocolumn: [{ value: 1 }] } } }, 'RG_ERR_UNKNOWN_COLUMN'],
        [{ entityId: f.id([1]), cells: { group_family: { long_qualifier: [{ value: 'not a long' }] } } }, 'RG_ERR_BAD_VALUE'],
        [{ entityId: f.id([1]), cells: { group_family: { long_qualifier: [{ value: 1, writer_schema: 999 }] } } }, f.schemaError('RG_ERR_UNKNOWN_SCHEMA_ID')],
        [
          { entityId: f.id([1]), cells: { group_family: { long_qualifier: [{ value: 1, writer_schema: { type: 'nonsense' } }] } } },
          f.schemaError('RG_ERR_BAD_SCHEMA'),
        ],
        [{ entityId: f.id([1]), cells: { group_family: { long_qualifier: [{ value: 1, timestamp: -5 }] } } }, 'RG_ERR_BAD_TIMESTAMP'],
      ];
      for (const [body, c] of cases) {
        const res = await post(ROWS, [{ entityId: f.id([4040]), cells: { longs: { x: [{ value: 1, timestamp: 1 }] } } }, body]);
        t.equal(res.status, 400, JSON.stringify(body));
        const err = JSON.parse(res.body) as { code: string; exception: string };
        t.equal(err.code, c, `${JSON.stringify(body)}: ${err.exception}`);
        t.match(err.exception, /^row 1: /, 'message says which row');
      }
      const after = rowsOf((await get(`${ROWS}?${eid([4040])}`)).body) as Row[];
      t.same(after[0]!.cells, {}, 'the valid first row of each rejected body was not written');
      const notJson = await raw(h.base, 'POST', ROWS, `{"entityId": ${f.idJson([1])}, `, json);
      t.equal(notJson.status, 400);
      t.equal(code(notJson.body), 'RG_ERR_BAD_BODY');
      const wrongType = await raw(h.base, 'POST', ROWS, '{}', { 'content-type': 'text/plain' });
      t.equal(wrongType.status, 415);
    });

    t.test('a 64-bit long survives POST and GET exactly', async (t) => {
      const big = 9223372036854775807n;
      const res = await raw(h.base, 'POST', ROWS, `{"entityId":${f.idJson([big])},"cells":{"longs":{"max":[{"value":${big},"timestamp":1}]}}}`, json);
      t.equal(res.status, 200, res.body);
      const row = await get(`${ROWS}?eid=${q(f.eid([big]))}`);
      t.equal(row.body, `{"entityId":${f.idJson([big])},"cells":{"longs":{"max":[${f.cellJson(1, String(big), 3)}]}}}\r\n`);
    });

    t.test('regression: a bulk get without limit returns every requested row, not the scan default of 100', async (t) => {
      const ids = Array.from({ length: 150 }, (_, i) => [100_000 + i]);
      const res = await get(`${ROWS}?${eids(...ids)}`);
      t.equal(res.status, 200);
      t.same(
        (rowsOf(res.body) as Row[]).map((r) => r.entityId),
        ids.map((c) => f.id(c)),
      );
      t.equal(rowsOf((await get(`${ROWS}?${eids(...ids)}&limit=7`)).body).length, 7, 'an explicit limit still applies');
    });
  });
}
