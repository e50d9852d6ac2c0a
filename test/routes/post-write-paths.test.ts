/**
 * A POST's rows reach the embedded store by one atomic write whatever they hold: slice by slice
 * inside one transaction (LmdbStore.writeSlices, lib/http/write-batch.ts), counter increments,
 * wide rows and rows the store refuses included: the same cells are written, or, when the store
 * refuses a row or an increment overflows, none of the body's.
 */
import t from 'tap';
import type { LmdbStore } from '../../lib/store/lmdb/lmdb-store.js';
import { json, rowsOf } from '../support/fixture-tables.js';
import { startInProcess, type InProcessGateway } from '../support/in-process.js';

const ROWS = '/v1/instances/default/tables/sample_table/rows';

/** Which store write each POST used (observed, then passed on). */
function watchWrites(h: InProcessGateway): string[] {
  const store = h.store as LmdbStore;
  const used: string[] = [];
  const write = store.write.bind(store);
  const writeSlices = store.writeSlices.bind(store);
  store.write = (...args) => (used.push('write'), write(...args));
  store.writeSlices = (...args) => (used.push('writeSlices'), writeSlices(...args));
  return used;
}

const cell = (value: string, timestamp = 5) => [{ value, timestamp }];

t.test('a body of rows is one slice-wise write, every cell as posted', async (t) => {
  const h = await startInProcess();
  t.teardown(() => h.close());
  const used = watchWrites(h);
  const rows = Array.from({ length: 3000 }, (_, i) => ({
    entityId: [i],
    cells: { strings: { a: cell(`v${i}`) }, group_family: { counter: [{ value: i, timestamp: 1 }] } },
  }));
  t.equal((await h.raw('POST', ROWS, JSON.stringify(rows), json)).status, 200);
  t.same(used, ['writeSlices']);
  const back = rowsOf((await h.raw('GET', `${ROWS}?limit=-1&cols=strings,group_family:counter`)).body) as {
    entityId: number[];
    cells: { strings: { a: { value: string }[] }; group_family: { counter: { value: number }[] } };
  }[];
  t.equal(back.length, 3000);
  t.ok(
    back.every((r) => r.cells.strings.a[0]!.value === `v${r.entityId[0]}` && r.cells.group_family.counter[0]!.value === r.entityId[0]),
    'every cell as posted',
  );
});

t.test('counter increments are applied in body order, with the other rows of the body', async (t) => {
  const h = await startInProcess();
  t.teardown(() => h.close());
  const used = watchWrites(h);
  const rows = [
    { entityId: [1], cells: { group_family: { counter: [{ value: 40, timestamp: 1 }] } } },
    ...Array.from({ length: 2000 }, (_, i) => ({ entityId: [100 + i], cells: { strings: { a: cell('x') } } })),
    { entityId: [1], cells: { group_family: { counter: [{ value: { incr: 2 } }] } } },
  ];
  t.equal((await h.raw('POST', ROWS, JSON.stringify(rows), json)).status, 200);
  t.same(used, ['writeSlices']);
  t.match((await h.raw('GET', `${ROWS}?eid=%5B1%5D&cols=group_family:counter`)).body, /"value":42[,}]/);
  t.equal(rowsOf((await h.raw('GET', `${ROWS}?limit=-1&cols=strings`)).body).length, 2000);
});

t.test('an increment that overflows rolls the whole body back', async (t) => {
  const h = await startInProcess();
  t.teardown(() => h.close());
  const rows = [
    ...Array.from({ length: 1500 }, (_, i) => ({ entityId: [100 + i], cells: { strings: { a: cell('x') } } })),
    { entityId: [1], cells: { group_family: { counter: [{ value: 9_223_372_036_854_775_807n.toString(), timestamp: 1 }] } } },
  ];
  const body = JSON.stringify(rows).replace('"9223372036854775807"', '9223372036854775807');
  t.equal((await h.raw('POST', ROWS, body, json)).status, 200);
  const res = await h.raw(
    'POST',
    ROWS,
    JSON.stringify([
      { entityId: [5], cells: { strings: { a: cell('z') } } },
      { entityId: [1], cells: { group_family: { counter: [{ value: { incr: 1 } }] } } },
    ]),
    json,
  );
  t.equal(res.status, 400);
  t.match(JSON.parse(res.body), { code: 'RG_ERR_BAD_COUNTER' });
  t.equal((await h.raw('GET', `${ROWS}?eid=%5B5%5D`)).body, '{"entityId":[5],"cells":{}}\r\n', 'the row before the overflowing increment was rolled back');
});

t.test('a row of more than 65,535 cells is written (spilled to cell entries)', async (t) => {
  const h = await startInProcess();
  t.teardown(() => h.close());
  const strings: Record<string, { value: string; timestamp: number }[]> = {};
  for (let i = 0; i < 65_536; i++) strings[`q${i}`] = cell('v');
  const res = await h.raw(
    'POST',
    ROWS,
    JSON.stringify([
      { entityId: [1], cells: { strings } },
      { entityId: [2], cells: { strings: { a: cell('y') } } },
    ]),
    json,
  );
  t.equal(res.status, 200, res.body.slice(0, 200));
  const [one] = rowsOf((await h.raw('GET', `${ROWS}?eid=%5B1%5D&cols=strings`)).body) as { cells: { strings: object } }[];
  t.equal(Object.keys(one!.cells.strings).length, 65_536, 'every cell of the big row');
  t.match((await h.raw('GET', `${ROWS}?eid=%5B2%5D&cols=strings`)).body, /"value":"y"/);
});

t.test("a cell key over LMDB's limit: the store refuses the body, and nothing of it is written", async (t) => {
  const h = await startInProcess();
  t.teardown(() => h.close());
  const rows = [
    ...Array.from({ length: 1500 }, (_, i) => ({ entityId: [i], cells: { strings: { a: cell('x') } } })),
    { entityId: [9999], cells: { strings: { ['q'.repeat(2000)]: cell('long') } } },
  ];
  const res = await h.raw('POST', ROWS, JSON.stringify(rows), json);
  t.equal(res.status, 400);
  t.match(JSON.parse(res.body), { code: 'RG_ERR_ROW_KEY_TOO_LONG', exception: /exceed the embedded store's key limit of 1978 bytes/ });
  t.equal((await h.raw('GET', `${ROWS}?limit=-1`)).body, '', 'nothing written');
});
