/**
 * The store conformance suite: one set of tests written against the Store interface, run
 * unchanged against every backend (lmdb.test.ts, and the Bigtable backend's test).
 */
import type { Test } from 'tap';
import { parseLayout } from '../../lib/model/layout.js';
import { FOREVER, type EncodedCell, type ReadSpec, type RowOut } from '../../lib/model/types.js';
import type { RowKeyFilter, Store } from '../../lib/store/store.js';

export type StoreFactory = () => Promise<Store>;

const ALL: ReadSpec = { maxVersions: 1, minTimestamp: 0, maxTimestamp: Number.MAX_SAFE_INTEGER };
const EVERY_VERSION: ReadSpec = { ...ALL, maxVersions: FOREVER };

/** A RAW-keyed table: keys are the bytes the tests choose, so byte order is easy to check. */
export const RAW_LAYOUT = `{
  name: "raw",
  keys_format: {encoding: "RAW"},
  locality_groups: [
    {name: "default", in_memory: false, max_versions: 3, ttl_seconds: 2147483647, compression_type: "NONE",
     families: [
       {name: "info", columns: [
         {name: "name", column_schema: {type: "INLINE", value: '"string"'}},
         {name: "age", column_schema: {type: "INLINE", value: '"int"'}},
         {name: "visits", column_schema: {type: "COUNTER", storage: "FINAL"}}]},
       {name: "tags", map_schema: {type: "INLINE", value: '"string"'}}]},
    {name: "shortlived", in_memory: false, max_versions: 10, ttl_seconds: 60, compression_type: "NONE",
     families: [{name: "recent", map_schema: {type: "INLINE", value: '"long"'}}]}
  ],
  version: "layout-1.0.0"
}`;

const key = (s: string | number[]): Buffer => (typeof s === 'string' ? Buffer.from(s, 'latin1') : Buffer.from(s));
const str = (family: string, qualifier: string, value: string, timestamp?: number): EncodedCell => ({
  kind: 'value', family, qualifier, timestamp, schemaId: 0, json: JSON.stringify(value),
});
const int = (family: string, qualifier: string, value: number, timestamp?: number): EncodedCell => ({
  kind: 'value', family, qualifier, timestamp, schemaId: 2, json: String(value),
});

async function collect(scan: AsyncIterable<RowOut[]>): Promise<RowOut[]> {
  const rows: RowOut[] = [];
  for await (const batch of scan) rows.push(...batch);
  return rows;
}
const keysOf = (rows: readonly RowOut[]): string[] => rows.map((r) => r.rowKey.toString('hex'));
const cellsOf = (row: RowOut): string[] => row.cells.map((c) => `${c.family}:${c.qualifier}@${c.timestamp}=${c.json}`);

export function storeConformance(t: Test, makeStore: StoreFactory): void {
  let store: Store;
  let instance = '';
  let seq = 0;

  t.beforeEach(async () => {
    store = await makeStore();
    instance = `inst${++seq}`;
    await store.createInstance(instance);
    await store.createTable(instance, parseLayout(RAW_LAYOUT));
  });
  t.afterEach(async () => {
    await store.close();
  });

  t.test('instances: created once, listed, with metadata and a pre-registered schema table', async (t) => {
    t.ok((await store.listInstances()).includes(instance));
    await t.rejects(store.createInstance(instance), { code: 'RG_ERR_INSTANCE_EXISTS' });
    const meta = await store.instanceMetadata(instance);
    t.equal(meta.dataVersion, 'system-2.0');
    t.same(meta.schemaTable.map((e) => e.id), [0, 1, 2, 3, 4, 5, 6, 7]);
    t.same(meta.tables.map((x) => x.name), ['raw']);
    await t.rejects(store.instanceMetadata('nosuch'), { code: 'RG_ERR_INSTANCE_NOT_FOUND' });
  });

  t.test('tables: created once, listed, layout served normalized, unknown ones are not found', async (t) => {
    t.same(await store.listTables(instance), ['raw']);
    const layout = await store.getLayout(instance, 'raw');
    t.equal(layout.name, 'raw');
    t.same(parseLayout(layout.desc).desc, layout.desc, 'served layout parses back to itself');
    await t.rejects(store.createTable(instance, parseLayout(RAW_LAYOUT)), { code: 'RG_ERR_TABLE_EXISTS' });
    await t.rejects(store.getLayout(instance, 'nosuch'), { code: 'RG_ERR_TABLE_NOT_FOUND' });
    await t.rejects(store.getLayout('nosuch', 'raw'), { code: 'RG_ERR_INSTANCE_NOT_FOUND' });
    await t.rejects(store.listTables('nosuch'), { code: 'RG_ERR_INSTANCE_NOT_FOUND' });
  });

  t.test('regression: names of any length are "not found" or refused, never a store failure (4,087 characters answered 500; fuzz seed 105114693)', async (t) => {
    for (const n of [256, 1000, 1978, 4087, 4096, 9000]) {
      const name = 'a'.repeat(n);
      await t.rejects(store.instanceMetadata(name), { code: 'RG_ERR_INSTANCE_NOT_FOUND' }, `instance name of ${n} characters`);
      await t.rejects(store.getLayout(instance, name), { code: 'RG_ERR_TABLE_NOT_FOUND' }, `table name of ${n} characters`);
      await t.rejects(store.createInstance(name), { code: 'RG_ERR_BAD_PARAMETER' }, `creating an instance named with ${n} characters`);
    }
    await t.rejects(store.getLayout(instance, 'bad name/x'), { code: 'RG_ERR_TABLE_NOT_FOUND' });
    await store.createInstance('b'.repeat(255));
    t.ok((await store.listInstances()).includes('b'.repeat(255)), 'a 255-character instance name is allowed');
  });

  t.test('schema table: new schemas get 8, 9, ...; one id per schema; ids resolve back', async (t) => {
    const schemas = await store.schemaTable(instance);
    const a = await schemas.idOf('{"type":"array","items":"string"}');
    const b = await schemas.idOf('{"type":"map","values":"long"}');
    t.equal(a, 8);
    t.equal(b, 9);
    t.equal(await schemas.idOf('{"type":"array","items":"string"}'), 8);
    t.equal(await schemas.schemaOf(9), '{"type":"map","values":"long"}');
    t.equal(await schemas.schemaOf(99), undefined);
    t.same((await schemas.entries()).map((e) => e.id), [0, 1, 2, 3, 4, 5, 6, 7, 8, 9]);
  });

  t.test('point get: selected cells sorted by family and qualifier, newest first; a missing row has no cells', async (t) => {
    await store.write(instance, 'raw', [
      { rowKey: key('alice'), cells: [str('info', 'name', 'Alice', 10), str('info', 'name', 'Alicia', 20), int('info', 'age', 30, 10), str('tags', 'z', 'last', 5), str('tags', 'a', 'first', 5)] },
    ]);
    const [row, missing] = await store.get(instance, 'raw', [key('alice'), key('bob')], EVERY_VERSION);
    t.same(cellsOf(row!), ['info:age@10=30', 'info:name@20="Alicia"', 'info:name@10="Alice"', 'tags:a@5="first"', 'tags:z@5="last"']);
    t.same(missing!.cells, []);
    t.equal(missing!.rowKey.toString(), 'bob');
    const [latest] = await store.get(instance, 'raw', [key('alice')], ALL);
    t.same(cellsOf(latest!), ['info:age@10=30', 'info:name@20="Alicia"', 'tags:a@5="first"', 'tags:z@5="last"']);
  });

  t.test('reads push down cols, versions and timerange ([min, max))', async (t) => {
    const cells = [1, 2, 3].map((ts) => str('info', 'name', `v${ts}`, ts));
    await store.write(instance, 'raw', [{ rowKey: key('r'), cells: [...cells, str('tags', 'x', 'tx', 2)] }]);
    const get = async (read: ReadSpec): Promise<string[]> => cellsOf((await store.get(instance, 'raw', [key('r')], read))[0]!);
    t.same(await get({ ...ALL, columns: [{ family: 'tags' }] }), ['tags:x@2="tx"']);
    t.same(await get({ ...ALL, columns: [{ family: 'info', qualifier: 'name' }], maxVersions: 2 }), ['info:name@3="v3"', 'info:name@2="v2"']);
    t.same(await get({ ...EVERY_VERSION, minTimestamp: 2, maxTimestamp: 3 }), ['info:name@2="v2"', 'tags:x@2="tx"']);
    t.same(await get({ ...ALL, minTimestamp: 0, maxTimestamp: 3 }), ['info:name@2="v2"', 'tags:x@2="tx"'], 'versions count within the time range');
    t.same(await get({ ...ALL, columns: [{ family: 'info', qualifier: 'age' }] }), []);
  });

  t.test('max_versions: excess versions are trimmed on write and never read', async (t) => {
    for (let ts = 1; ts <= 5; ts++) await store.write(instance, 'raw', [{ rowKey: key('v'), cells: [str('info', 'name', `v${ts}`, ts)] }]);
    await store.write(instance, 'raw', [{ rowKey: key('v'), cells: [1, 2, 3, 4, 5, 6].map((ts) => str('tags', 'k', `k${ts}`, ts + 100)) }]);
    const [row] = await store.get(instance, 'raw', [key('v')], EVERY_VERSION);
    t.same(cellsOf(row!), ['info:name@5="v5"', 'info:name@4="v4"', 'info:name@3="v3"', 'tags:k@106="k6"', 'tags:k@105="k5"', 'tags:k@104="k4"']);
  });

  t.test('ttl_seconds: cells older than the locality group TTL are not read', async (t) => {
    const now = Date.now();
    await store.write(instance, 'raw', [{ rowKey: key('t'), cells: [
      { kind: 'value', family: 'recent', qualifier: 'old', timestamp: now - 3_600_000, schemaId: 3, json: '1' },
      { kind: 'value', family: 'recent', qualifier: 'new', timestamp: now, schemaId: 3, json: '2' },
      str('info', 'name', 'kept forever', 1),
    ] }]);
    const [row] = await store.get(instance, 'raw', [key('t')], EVERY_VERSION);
    t.same(cellsOf(row!), ['info:name@1="kept forever"', `recent:new@${now}=2`]);
  });

  t.test('server timestamps: cells without one get the write time, shared within a row', async (t) => {
    const before = Date.now();
    await store.write(instance, 'raw', [{ rowKey: key('s'), cells: [str('info', 'name', 'n'), int('info', 'age', 1)] }]);
    const after = Date.now();
    const [row] = await store.get(instance, 'raw', [key('s')], ALL);
    const stamps = row!.cells.map((c) => c.timestamp);
    t.equal(stamps.length, 2);
    t.equal(stamps[0], stamps[1]);
    t.ok(stamps[0]! >= before && stamps[0]! <= after);
  });

  t.test('scan: rows in row-key byte order, [start, end) bounds, limit, rows without selected cells skipped', async (t) => {
    const names = [[0x00], [0x00, 0x00], [0x00, 0x01], [0x01], [0x7f], [0x80], [0xff], [0xff, 0x00], [0xff, 0xff]];
    const shuffled = [...names].sort(() => Math.random() - 0.5);
    await store.write(instance, 'raw', shuffled.map((n) => ({ rowKey: key(n), cells: [str('info', 'name', Buffer.from(n).toString('hex'), 1)] })));
    await store.write(instance, 'raw', [{ rowKey: key([0x02]), cells: [str('tags', 'only', 'tag', 1)] }]);
    const all = await collect(store.scan(instance, 'raw', { limit: -1, read: { ...ALL, columns: [{ family: 'info' }] } }));
    t.same(keysOf(all), ['00', '0000', '0001', '01', '7f', '80', 'ff', 'ff00', 'ffff']);
    const everything = await collect(store.scan(instance, 'raw', { limit: -1, read: ALL }));
    t.same(keysOf(everything), ['00', '0000', '0001', '01', '02', '7f', '80', 'ff', 'ff00', 'ffff']);
    const ranged = await collect(store.scan(instance, 'raw', { start: key([0x00, 0x00]), end: key([0xff]), limit: -1, read: ALL }));
    t.same(keysOf(ranged), ['0000', '0001', '01', '02', '7f', '80']);
    const limited = await collect(store.scan(instance, 'raw', { start: key([0x01]), limit: 3, read: ALL }));
    t.same(keysOf(limited), ['01', '02', '7f']);
    t.same(await collect(store.scan(instance, 'raw', { limit: 0, read: ALL })), []);
    t.equal(store.openScans, 0);
  });

  t.test('scan: a row-key filter keeps only matching rows and its prefix narrows the range', async (t) => {
    await store.write(instance, 'raw', ['apple', 'apricot', 'banana', 'avocado', 'apex'].map((n) => ({ rowKey: key(n), cells: [str('info', 'name', n, 1)] })));
    const filter: RowKeyFilter = { prefix: key('ap'), matches: (k) => k.toString().endsWith('e') || k.toString().endsWith('x') };
    const rows = await collect(store.scan(instance, 'raw', { filter, limit: -1, read: ALL }));
    t.same(rows.map((r) => r.rowKey.toString()), ['apex', 'apple']);
    const limited = await collect(store.scan(instance, 'raw', { filter: { matches: () => true }, limit: 2, read: ALL }));
    t.same(limited.map((r) => r.rowKey.toString()), ['apex', 'apple']);
  });

  t.test('scan: large scans come in batches, and return() releases the scan at once', async (t) => {
    const rows = Array.from({ length: 2000 }, (_, i) => ({ rowKey: key(`row${String(i).padStart(5, '0')}`), cells: [int('info', 'age', i, 1)] }));
    await store.write(instance, 'raw', rows);
    const scan = store.scan(instance, 'raw', { limit: -1, read: ALL });
    const first = await scan.next();
    t.notOk(first.done);
    t.ok(first.value.length > 0 && first.value.length < 2000, 'first batch is partial');
    t.equal(store.openScans, 1);
    await scan.return();
    t.equal(store.openScans, 0, 'returned scan is released');
    t.same(await scan.next(), { done: true, value: undefined });
    const full = await collect(store.scan(instance, 'raw', { limit: -1, read: ALL }));
    t.equal(full.length, 2000);
    t.equal(full[1999]!.cells[0]!.json, '1999');
    t.equal(store.openScans, 0, 'finished scan is released');
    const abandoned = store.scan(instance, 'raw', { limit: -1, read: ALL });
    for await (const batch of abandoned) { t.ok(batch.length > 0); break; }
    t.equal(store.openScans, 0, 'for-await break releases the scan');
  });

  t.test('writes: a batch is atomic, a failing cell leaves nothing written', async (t) => {
    await store.write(instance, 'raw', [{ rowKey: key('c'), cells: [{ kind: 'counter-set', family: 'info', qualifier: 'visits', value: 2n ** 63n - 1n, timestamp: 1 }] }]);
    await t.rejects(store.write(instance, 'raw', [
      { rowKey: key('first'), cells: [str('info', 'name', 'should vanish', 1)] },
      { rowKey: key('c'), cells: [{ kind: 'counter-increment', family: 'info', qualifier: 'visits', delta: 1n }] },
    ]), { code: 'RG_ERR_BAD_COUNTER' });
    const [first] = await store.get(instance, 'raw', [key('first')], ALL);
    t.same(first!.cells, []);
    await t.rejects(store.write(instance, 'raw', [{ rowKey: Buffer.alloc(5000, 1), cells: [str('info', 'name', 'x', 1)] }]), { code: 'RG_ERR_ROW_KEY_TOO_LONG' });
  });

  t.test('counters: set, increment atomically, negative increments, only the latest value is read', async (t) => {
    const visits = (n: bigint): EncodedCell => ({ kind: 'counter-increment', family: 'info', qualifier: 'visits', delta: n });
    await store.write(instance, 'raw', [{ rowKey: key('k'), cells: [{ kind: 'counter-set', family: 'info', qualifier: 'visits', value: 0n, timestamp: 0 }] }]);
    await Promise.all(Array.from({ length: 40 }, () => store.write(instance, 'raw', [{ rowKey: key('k'), cells: [visits(3n)] }])));
    await store.write(instance, 'raw', [{ rowKey: key('k'), cells: [visits(-20n)] }]);
    const [row] = await store.get(instance, 'raw', [key('k')], EVERY_VERSION);
    t.same(row!.cells.map((c) => [c.qualifier, c.json, c.schemaId]), [['visits', '100', 3]]);
    await store.write(instance, 'raw', [{ rowKey: key('fresh'), cells: [visits(9007199254740993n)] }]);
    const [fresh] = await store.get(instance, 'raw', [key('fresh')], ALL);
    t.equal(fresh!.cells[0]!.json, '9007199254740993', 'beyond 2^53 stays exact');
  });

  t.test('deletes: a row, a family, a column, and versions up to a timestamp', async (t) => {
    const row = (name: string) => ({ rowKey: key(name), cells: [str('info', 'name', 'a', 1), str('info', 'name', 'b', 2), str('info', 'name', 'c', 3), int('info', 'age', 7, 1), str('tags', 't', 'x', 1)] });
    await store.write(instance, 'raw', ['d1', 'd2', 'd3', 'd4'].map(row));
    await store.delete(instance, 'raw', [{ rowKey: key('d1') }]);
    await store.delete(instance, 'raw', [{ rowKey: key('d2'), family: 'info' }]);
    await store.delete(instance, 'raw', [{ rowKey: key('d3'), family: 'info', qualifier: 'name' }]);
    await store.delete(instance, 'raw', [{ rowKey: key('d4'), family: 'info', qualifier: 'name', upToTimestamp: 2 }]);
    const rows = await store.get(instance, 'raw', ['d1', 'd2', 'd3', 'd4'].map((k) => key(k)), EVERY_VERSION);
    t.same(rows.map(cellsOf), [
      [],
      ['tags:t@1="x"'],
      ['info:age@1=7', 'tags:t@1="x"'],
      ['info:age@1=7', 'info:name@3="c"', 'tags:t@1="x"'],
    ]);
    await store.delete(instance, 'raw', [{ rowKey: key('d4'), upToTimestamp: 1 }]);
    t.same(cellsOf((await store.get(instance, 'raw', [key('d4')], EVERY_VERSION))[0]!), ['info:name@3="c"']);
  });

  t.test('over-long keys on reads: a point get of a key no write accepts is a missing row; scan bounds of any length select exactly [start, end) (lmdb-js threw "Key of size 3006 was too large")', async (t) => {
    const m = store.maxRowKeyBytes;
    const k = (n: number, last = ''): Buffer => Buffer.concat([Buffer.alloc(n, 'k'), key(last)]);
    const zeros = (n: number, last: number[] = []): Buffer => Buffer.concat([Buffer.alloc(n, 0), Buffer.from(last)]);
    // In byte order. `longest` is the longest key the store takes; z0/z1 are escaped on LMDB (00 -> 00 FF).
    const rows: [string, Buffer][] = [
      ['z0', zeros(400)], ['z1', zeros(399, [1])], ['a', key('a')], ['below', k(m - 1, 'j')], ['longest', k(m)], ['above', k(m - 1, 'l')], ['z', key('z')],
    ];
    await store.write(instance, 'raw', rows.map(([name, rowKey]) => ({ rowKey, cells: [str('tags', 't', name, 1)] })));
    const names = new Map(rows.map(([name, rowKey]) => [rowKey.toString('hex'), name]));
    const scanNames = async (start: Buffer | undefined, end: Buffer | undefined): Promise<string[]> =>
      (await collect(store.scan(instance, 'raw', { start, end, limit: -1, read: ALL }))).map((r) => names.get(r.rowKey.toString('hex')) ?? `unexpected ${r.rowKey.length}-byte key`);

    const got = await store.get(instance, 'raw', [k(m, 'x'), k(20_000), zeros(m), k(m)], ALL);
    t.same(got.map((r) => r.cells.length), [0, 0, 0, 1], 'keys over maxRowKeyBytes (and one no write could store) are missing rows; the others are read');
    t.same(got.map((r) => r.rowKey.length), [m + 1, 20_000, m, m], 'each answered under its own key');

    t.same(await scanNames(k(m, 'x'.repeat(2000)), undefined), ['above', 'z'], 'a start bound longer than any key: a stored key it extends sorts before it');
    t.same(await scanNames(undefined, k(m, 'x'.repeat(2000))), ['z0', 'z1', 'a', 'below', 'longest'], 'an end bound longer than any key');
    t.same(await scanNames(k(m - 1, 'j'.concat('x'.repeat(3000))), Buffer.concat([k(m), zeros(3000)])), ['longest'], 'both bounds over-long');
    t.same(await scanNames(zeros(m + 2000), undefined), ['z1', 'a', 'below', 'longest', 'above', 'z'], 'an over-long start of 00 bytes');
    t.same(await scanNames(undefined, zeros(m + 2000)), ['z0'], 'an over-long end of 00 bytes');
    t.same(await scanNames(k(20_000), Buffer.alloc(20_000, 'l')), ['above'], '20,000-byte bounds');
    t.equal(store.openScans, 0);
  });

  t.test('regression: deleting a column whose qualifier is longer than any stored key deletes nothing (was a 500 from lmdb-js)', async (t) => {
    await store.write(instance, 'raw', [{ rowKey: key('q1'), cells: [str('tags', 't', 'x', 1)] }]);
    for (const n of [1978, 4087, 20_000]) {
      await store.delete(instance, 'raw', [{ rowKey: key('q1'), family: 'tags', qualifier: 'q'.repeat(n) }]);
      await store.delete(instance, 'raw', [{ rowKey: Buffer.alloc(store.maxRowKeyBytes, 7), family: 'tags', qualifier: 'q'.repeat(n) }]);
    }
    t.same(cellsOf((await store.get(instance, 'raw', [key('q1')], EVERY_VERSION))[0]!), ['tags:t@1="x"'], 'the row is untouched');
  });
}
