/**
 * The one-row insert (LmdbStore.insertNewRow, taken by writeSlices for a POST of one row): a row
 * the table does not hold is encoded on the main thread and put by lmdb-js's conditional write.
 * Whatever path a write takes, the table must end byte for byte as the general path
 * (Store.write: RowWriter inside a transaction) leaves it: each case writes the same rows into
 * two tables of one layout, one through writeSlices, one through write(), and compares every
 * stored entry.
 */
import { open } from 'lmdb';
import t, { type Test } from 'tap';
import { parseLayout } from '../../lib/model/layout/layout.js';
import type { EncodedCell, RowWrite } from '../../lib/model/types.js';
import { decodeCompactRow } from '../../lib/store/lmdb/compact-row.js';
import type { LmdbStore } from '../../lib/store/lmdb/lmdb-store.js';
import { RAW_LAYOUT } from '../store/conformance.js';
import { openStoreWithTable } from '../store/lmdb-fixtures.js';

const FAST = 'raw';
const GENERAL = 'general';

const str = (family: string, qualifier: string, value: string, timestamp?: number): EncodedCell => ({
  kind: 'value',
  family,
  qualifier,
  timestamp,
  schemaId: 0,
  json: JSON.stringify(value),
});
const long = (qualifier: string, value: number, timestamp: number): EncodedCell => ({
  kind: 'value',
  family: 'recent',
  qualifier,
  timestamp,
  schemaId: 3,
  json: String(value),
});
const row = (key: string, cells: EncodedCell[]): RowWrite => ({ rowKey: Buffer.from(key, 'latin1'), cells });

/** A store with two tables of RAW_LAYOUT; `inserts` counts the conditional puts (lmdb-js ifNoExists) made into the first. */
async function twoTables(t: Test): Promise<{ store: LmdbStore; dir: string; inserts: () => number }> {
  const { store, dir } = await openStoreWithTable(t, parseLayout(RAW_LAYOUT), { scanThreads: 0 });
  await store.createTable('i', parseLayout(RAW_LAYOUT.replace('name: "raw"', `name: "${GENERAL}"`)));
  // Observed, not replaced: the table's own LMDB database counts the conditional puts it is asked for.
  const db = (store as unknown as { openTable(i: string, t: string): { db: { ifNoExists: (...a: unknown[]) => Promise<boolean> } } }).openTable('i', FAST).db;
  const ifNoExists = db.ifNoExists.bind(db);
  let n = 0;
  db.ifNoExists = (...a: unknown[]) => {
    n++;
    return ifNoExists(...a);
  };
  return { store, dir, inserts: () => n };
}

/** Every entry of a table as hex key = hex value. */
function entries(dir: string, table: string): string[] {
  const env = open({ path: dir, readOnly: true, maxDbs: 10_000 });
  try {
    const db = env.openDB<Buffer, Buffer>({ name: `data/i/${table}`, keyEncoding: 'binary', encoding: 'binary' });
    return [...db.getRange({})].map(({ key, value }) => `${key.toString('hex')}=${value.toString('hex')}`);
  } finally {
    void env.close();
  }
}

/** Writes each POST (a list of rows) through writeSlices into FAST and through write() into GENERAL, one after another. */
async function writeBoth(store: LmdbStore, posts: RowWrite[][]): Promise<void> {
  for (const rows of posts) {
    await store.writeSlices('i', FAST, [rows]);
    await store.write('i', GENERAL, rows);
  }
}

const now = Date.now();
const shapes: [string, RowWrite][] = [
  ['values of two families', row('a', [str('info', 'name', 'ann', 5), str('tags', 'x', 'one', 7), str('tags', 'y', 'two', 7)])],
  [
    'more versions than max_versions (3), out of order',
    row(
      'b',
      [1, 9, 4, 7, 2].map((ts) => str('info', 'name', `v${ts}`, ts)),
    ),
  ],
  ['a cell past its TTL beside live ones', row('c', [long('old', 1, 1), long('new', 2, now - 1000), long('new', 3, now - 2000), str('info', 'name', 'c', 3)])],
  ['a counter set', row('d', [{ kind: 'counter-set', family: 'info', qualifier: 'visits', timestamp: 11, value: 41n }, str('info', 'name', 'd', 11)])],
  ['two versions at one timestamp (the later wins)', row('e', [str('info', 'name', 'first', 6), str('info', 'name', 'second', 6)])],
  ['a key with 00 and ff bytes', row('k\u0000\u00ff\u0000', [str('info', 'name', 'escaped', 8)])],
];

t.test('a new row is stored byte for byte as the general path stores it, through the conditional insert', async (t) => {
  const { store, dir, inserts } = await twoTables(t);
  await writeBoth(
    store,
    shapes.map(([, r]) => [r]),
  );
  t.equal(inserts(), shapes.length, `each of the ${shapes.length} new rows went through the conditional insert`);
  const fast = entries(dir, FAST);
  t.equal(fast.length, shapes.length);
  t.same(fast, entries(dir, GENERAL), shapes.map(([what]) => what).join('; '));
});

t.test('an existing row, increments, several rows and a row whose cells all expired take the general path, with the same result', async (t) => {
  const { store, dir, inserts } = await twoTables(t);
  await writeBoth(store, [
    [row('m', [str('info', 'name', 'one', 1)])],
    // Exists now: the conditional insert declines it, the general path merges it.
    [row('m', [str('info', 'name', 'two', 2), str('tags', 'z', 'zz', 2)])],
    [row('n', [{ kind: 'counter-increment', family: 'info', qualifier: 'visits', delta: 3n }])],
    [row('n', [{ kind: 'counter-increment', family: 'info', qualifier: 'visits', delta: 4n }])],
    [row('p', [str('info', 'name', 'p', 1)]), row('q', [str('info', 'name', 'q', 1)])],
    [row('r', [long('gone', 1, 1)])],
  ]);
  // 'm' twice: the first inserted, the second declined (the row exists) and merged.
  t.equal(inserts(), 2, 'only the one-row writes without increments tried the conditional insert');
  // Row n's counter version is stamped with the time of its increment, which may differ by a
  // millisecond between the two tables: its value is compared instead of its bytes.
  const nKey = Buffer.from('n').toString('hex');
  const withoutN = (all: string[]): string[] => all.filter((e) => !e.startsWith(nKey));
  const general = entries(dir, GENERAL);
  t.same(withoutN(entries(dir, FAST)), withoutN(general));
  t.equal(general.length, 4, 'm, n, p and q stored; r (all cells expired) is not');
  const counterOf = (all: string[]): string =>
    decodeCompactRow(Buffer.from(all.find((e) => e.startsWith(nKey))!.split('=')[1]!, 'hex')).columns[0]!.versions[0]!.json;
  t.equal(counterOf(entries(dir, FAST)), '7');
  t.equal(counterOf(general), '7');
  const m = decodeCompactRow(Buffer.from(entries(dir, FAST)[0]!.split('=')[1]!, 'hex'));
  t.same(
    m.columns.map((c) => `${c.family}:${c.qualifier}=${c.versions.map((v) => v.json).join(',')}`),
    ['info:name="two","one"', 'tags:z="zz"'],
    'the declined insert was merged with the stored row',
  );
});

t.test('cells without a timestamp get the time of the write', async (t) => {
  const { store, inserts } = await twoTables(t);
  const before = Date.now();
  await store.writeSlices('i', FAST, [[row('s', [str('info', 'name', 'now')])]]);
  const after = Date.now();
  t.equal(inserts(), 1);
  const [got] = await store.get('i', FAST, [Buffer.from('s')], { columns: undefined, maxVersions: 1, minTimestamp: 0, maxTimestamp: Number.MAX_SAFE_INTEGER });
  const cell = got!.cells[0]!;
  t.ok(cell.timestamp >= before && cell.timestamp <= after, `timestamp ${cell.timestamp} within [${before}, ${after}]`);
  t.equal(cell.json, '"now"');
});

t.test('concurrent one-row writes to one new key: one inserts, the others merge, nothing is lost', async (t) => {
  const { store } = await twoTables(t);
  const writes = Array.from({ length: 8 }, (_, i) => store.writeSlices('i', FAST, [[row('same', [str('tags', `q${i}`, `v${i}`, 1)])]]));
  await Promise.all(writes);
  const [got] = await store.get('i', FAST, [Buffer.from('same')], {
    columns: undefined,
    maxVersions: 1,
    minTimestamp: 0,
    maxTimestamp: Number.MAX_SAFE_INTEGER,
  });
  t.same(
    got!.cells.map((c) => `${c.qualifier}=${c.json}`).sort(),
    Array.from({ length: 8 }, (_, i) => `q${i}="v${i}"`),
  );
});

t.test('a row the store refuses is refused as the general path refuses it', async (t) => {
  const { store, dir } = await twoTables(t);
  const unknown = row('u', [str('nofamily', 'x', 'y', 1)]);
  const general = await store.write('i', GENERAL, [unknown]).then(
    () => undefined,
    (e: { code?: string }) => e.code,
  );
  t.ok(general !== undefined, `the general path refuses it (${general})`);
  await t.rejects(store.writeSlices('i', FAST, [[unknown]]), { code: general });
  t.same(entries(dir, FAST), []);
});
