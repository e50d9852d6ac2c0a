/**
 * The HTTP row checks (reads, scans, POST, bulk get, delete, counters) against a gateway on the
 * Bigtable store, over a cbtemulator this file starts; skipped, saying what is missing, without it.
 */
import t from 'tap';
import { BigtableStore } from '../../lib/store/bigtable/bigtable-store.js';
import { EMULATOR_MISSING, startEmulator } from '../store/bigtable-emulator.js';
import { json, raw, rowsOf, startGateway, type Harness } from './harness.js';

const ROWS = '/v1/instances/default/tables/sample_table/rows';
const PLAYERS = '/v1/instances/default/tables/players/rows';
const q = (v: unknown) => encodeURIComponent(typeof v === 'string' ? v : JSON.stringify(v));

type Cells = Record<string, Record<string, { timestamp: number; value: unknown; writer_schema: number }[]>>;

const emulator = await startEmulator();
if (!emulator) {
  t.test('HTTP rows on Bigtable', { skip: EMULATOR_MISSING }, async () => undefined);
} else {
  let h: Harness;
  t.before(async () => {
    h = await startGateway({}, { store: await BigtableStore.open({ projectId: 'test', instanceId: 'http', tablePrefix: 'rows' }) });
  });
  t.teardown(async () => {
    await h.close();
    await emulator.stop();
  });
  const post = (path: string, body: unknown) => raw(h.base, 'POST', path, JSON.stringify(body), json);
  const get = (path: string) => raw(h.base, 'GET', path);

  t.test('POST then GET eid: revision 3 JSON, sorted, newest first, writer_schema ids; a missing row has empty cells', async (t) => {
    const res = await post(ROWS, {
      entityId: [12345],
      cells: {
        group_family: {
          string_qualifier: [{ value: 'old', timestamp: 1, writer_schema: 'string' }, { value: 'new', timestamp: 5 }],
          long_qualifier: [{ value: 1000, timestamp: 1 }],
          inline_record: [{ value: { username: 'u', num_purchases: 10, nick: { string: 'n' } }, timestamp: 2 }],
        },
        strings: { 'apple iphone': [{ value: 'iphone', timestamp: 3 }], 'line\r\nbreak': [{ value: 'a\r\nb', timestamp: 3 }] },
      },
    });
    t.equal(res.status, 200, res.body);
    t.same(JSON.parse(res.body), { targets: [`${ROWS}?eid=${q('[12345]')}`] });
    const row = await get(`${ROWS}?eid=${q([12345])}&versions=all`);
    t.equal(row.status, 200);
    const [r] = rowsOf(row.body) as { entityId: unknown; cells: Cells }[];
    t.same(r!.entityId, [12345]);
    t.same(Object.keys(r!.cells), ['group_family', 'strings']);
    t.same(Object.keys(r!.cells.group_family!), ['inline_record', 'long_qualifier', 'string_qualifier']);
    t.same(r!.cells.group_family!.string_qualifier!.map((c) => [c.timestamp, c.value, c.writer_schema]), [[5, 'new', 0], [1, 'old', 0]]);
    t.same(r!.cells.group_family!.long_qualifier, [{ timestamp: 1, value: 1000, writer_schema: 3 }]);
    t.same(r!.cells.group_family!.inline_record![0]!.value, { username: 'u', num_purchases: 10, nick: { string: 'n' } });
    t.equal(r!.cells.strings!['line\r\nbreak']![0]!.value, 'a\r\nb');
    t.equal(row.body.split('\r\n').length, 2, 'one framed row');
    const missing = await get(`${ROWS}?eid=${q([999999])}`);
    t.equal(missing.body, '{"entityId":[999999],"cells":{}}\r\n');
  });

  t.test('scans: row-key order, limit, [start_eid, end_eid), zero rows is an empty 200 body', async (t) => {
    const ids = [12345, 2345, 56789, 54321, 55025];
    t.equal((await post(ROWS, ids.map((id) => ({ entityId: [id], cells: { longs: { n: [{ value: id, timestamp: 1 }] } } })))).status, 200);
    const all = rowsOf((await get(`${ROWS}?cols=longs&limit=-1`)).body) as { entityId: number[] }[];
    t.same(all.map((r) => r.entityId[0]), [56789, 12345, 54321, 2345, 55025]);
    const limited = rowsOf((await get(`${ROWS}?cols=longs&limit=2`)).body) as { entityId: number[] }[];
    t.same(limited.map((r) => r.entityId[0]), [56789, 12345]);
    const ranged = rowsOf((await get(`${ROWS}?cols=longs&start_eid=${q([12345])}&end_eid=${q('rowkey_hex=a2378000000000000929')}`)).body) as { entityId: number[] }[];
    t.same(ranged.map((r) => r.entityId[0]), [12345, 54321]);
    const none = await get(`${ROWS}?cols=longs&start_eid=${q('rowkey_hex=ffff')}`);
    t.equal(none.status, 200);
    t.equal(none.body, '');
    t.equal((await get(`${ROWS}?limit=0`)).body, '');
  });

  t.test('wildcard eids scan every value of a component, honouring limit', async (t) => {
    const players = [['cassander', 'greece'], ['antipater', 'makedonia'], ['seleukos', 'asia.central'], ['seleukos', 'makedonia']];
    t.equal((await post(PLAYERS, players.map((p) => ({ entityId: p, cells: { info: { email: [{ value: `${p[0]}@${p[1]}`, timestamp: 1 }] } } })))).status, 200);
    const seleukos = rowsOf((await get(`${PLAYERS}?eid=${q(['seleukos', []])}`)).body) as { entityId: string[] }[];
    t.same(seleukos.map((r) => r.entityId), [['seleukos', 'asia.central'], ['seleukos', 'makedonia']]);
    t.equal(rowsOf((await get(`${PLAYERS}?eid=${q(['seleukos', []])}&limit=1`)).body).length, 1);
    const byDomain = rowsOf((await get(`${PLAYERS}?eid=${q([[], 'makedonia'])}`)).body) as { entityId: string[] }[];
    t.same(byDomain.map((r) => r.entityId[0]).sort(), ['antipater', 'seleukos']);
  });

  t.test('bulk get returns each requested row once, in request order', async (t) => {
    const res = await get(`${ROWS}?cols=longs&eids=${q([[12345], [2345], 'rowkey_hex=44018000000000003039', [424242]])}`);
    t.equal(res.status, 200, res.body);
    const rows = rowsOf(res.body) as { entityId: number[]; cells: object }[];
    t.same(rows.map((r) => r.entityId[0]), [12345, 2345, 424242]);
    t.same(rows[2]!.cells, {});
  });

  t.test('cols, versions and timerange select cells', async (t) => {
    await post(ROWS, { entityId: [1], cells: { group_family: { string_qualifier: [1, 2, 3, 4, 5, 6].map((ts) => ({ value: `v${ts}`, timestamp: ts })) } } });
    const stamps = async (query: string) => {
      const [row] = rowsOf((await get(`${ROWS}?eid=${q([1])}&${query}`)).body) as { cells: Cells }[];
      return row!.cells.group_family?.string_qualifier!.map((c) => c.timestamp) ?? [];
    };
    t.same(await stamps('versions=3'), [6, 5, 4]);
    t.same(await stamps('versions=all&timerange=2..4'), [3, 2]);
    t.same(await stamps('versions=all&timerange=5..'), [6, 5]);
    t.same(await stamps('versions=all&timerange=..3'), [2, 1]);
    t.same(await stamps('cols=longs'), []);
    const bad = await get(`${ROWS}?eid=${q([1])}&cols=group_familyy`);
    t.equal(bad.status, 400);
    t.equal((JSON.parse(bad.body) as { code: string }).code, 'RG_ERR_BAD_COLUMNS');
  });

  t.test('counters: an integer sets, {"incr": n} increments atomically, overflow is a 400', async (t) => {
    const counter = (value: unknown, extra: object = {}) => post(ROWS, { entityId: [5], cells: { group_family: { counter: [{ value, ...extra }] } } });
    t.equal((await counter(0, { timestamp: 0 })).status, 200);
    const results = await Promise.all(Array.from({ length: 20 }, () => counter({ incr: 5 })));
    t.ok(results.every((r) => r.status === 200));
    t.equal((await counter({ incr: -1 })).status, 200);
    const read = async () => {
      const [row] = rowsOf((await get(`${ROWS}?eid=${q([5])}&cols=group_family:counter&versions=all`)).body) as { cells: Cells }[];
      return row!.cells.group_family!.counter!.map((c) => [c.value, c.writer_schema]);
    };
    t.same(await read(), [[99, 3]]);
    t.equal((await counter('five')).status, 400);
    const max = await raw(h.base, 'POST', ROWS, '{"entityId":[5],"cells":{"group_family":{"counter":[{"value":9223372036854775807}]}}}', json);
    t.equal(max.status, 200, max.body);
    const overflow = await counter({ incr: 1 });
    t.equal(overflow.status, 400);
    t.equal((JSON.parse(overflow.body) as { code: string }).code, 'RG_ERR_BAD_COUNTER');
    const after = await get(`${ROWS}?eid=${q([5])}&cols=group_family:counter`);
    t.match(after.body, /"value":9223372036854775807,/, 'an overflowing increment is undone');
  });

  t.test('DELETE removes rows, columns, and versions up to a timestamp', async (t) => {
    await post(ROWS, [10, 11, 12].map((id) => ({ entityId: [id], cells: { group_family: { string_qualifier: [1, 2, 3].map((ts) => ({ value: `v${ts}`, timestamp: ts })), long_qualifier: [{ value: 1, timestamp: 1 }] } } })));
    const del = (query: string) => raw(h.base, 'DELETE', `${ROWS}?${query}`);
    t.equal((await del(`eid=${q([10])}`)).body, 'true');
    t.equal((await del(`eid=${q([11])}&cols=group_family:string_qualifier`)).status, 200);
    t.equal((await del(`eids=${q([[12]])}&cols=group_family:string_qualifier&timestamp=2`)).status, 200);
    const rows = rowsOf((await get(`${ROWS}?eids=${q([[10], [11], [12]])}&versions=all`)).body) as { cells: Cells }[];
    t.same(rows[0]!.cells, {});
    t.same(Object.keys(rows[1]!.cells.group_family!), ['long_qualifier']);
    t.same(rows[2]!.cells.group_family!.string_qualifier!.map((c) => c.timestamp), [3]);
    t.equal((await del(`eid=${q([10])}&cols=nofamily`)).status, 400);
  });

  t.test('POST validates the whole body first; a 64-bit long survives exactly', async (t) => {
    const res = await post(ROWS, [{ entityId: [4040], cells: { longs: { x: [{ value: 1, timestamp: 1 }] } } }, { entityId: [1], cells: { nofamily: { x: [{ value: 1 }] } } }]);
    t.equal(res.status, 400);
    t.equal((JSON.parse(res.body) as { code: string }).code, 'RG_ERR_UNKNOWN_COLUMN');
    t.same((rowsOf((await get(`${ROWS}?eid=${q([4040])}`)).body)[0] as { cells: object }).cells, {});
    const big = '9223372036854775807';
    t.equal((await raw(h.base, 'POST', ROWS, `{"entityId":[${big}],"cells":{"longs":{"max":[{"value":${big},"timestamp":1}]}}}`, json)).status, 200);
    const row = await get(`${ROWS}?eid=[${big}]`);
    t.equal(row.body, `{"entityId":[${big}],"cells":{"longs":{"max":[{"timestamp":1,"value":${big},"writer_schema":3}]}}}\r\n`);
  });

  t.test('instances and tables come from Bigtable; an unknown table is a 404', async (t) => {
    const tables = await get('/v1/instances/default/tables');
    t.equal(tables.status, 200, tables.body);
    t.match(tables.body, /sample_table/);
    const missing = await get('/v1/instances/default/tables/nosuch/rows');
    t.equal(missing.status, 404);
    t.equal((JSON.parse(missing.body) as { code: string }).code, 'RG_ERR_TABLE_NOT_FOUND');
  });
}
