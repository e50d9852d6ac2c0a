/**
 * The store conformance suite: one set of tests written against the Store interface, run
 * unchanged against every backend (lmdb.test.ts, and the Bigtable backend's test).
 */
import type { Test } from 'tap';
import { rowRenderSpec, rowSerializer, ROW_TERMINATOR } from '../../lib/rows/row-format.js';
import { parseLayout } from '../../lib/model/layout/layout.js';
import { encodeRowKey } from '../../lib/model/keys/row-key.js';
import { FOREVER, WILDCARD, type ComponentValue, type EncodedCell, type ReadSpec, type RowOut, type Wildcard } from '../../lib/model/types.js';
import { compileWildcard } from '../../lib/model/keys/wildcard.js';
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

/** A salted FORMATTED table of two components (the salt hashes the first): rows of one STRING sort by hash. */
const WILD_LAYOUT = `{
  name: "wild",
  keys_format: {encoding: "FORMATTED", salt: {hash_size: 2}, range_scan_start_index: 1, nullable_start_index: 2,
    components: [{name: "s", type: "STRING"}, {name: "n", type: "LONG"}]},
  locality_groups: [{name: "default", in_memory: false, max_versions: 1, ttl_seconds: 2147483647, compression_type: "NONE",
    families: [{name: "info", map_schema: {type: "INLINE", value: '"string"'}}]}],
  version: "layout-1.1.0"
}`;

const key = (s: string | number[]): Buffer => (typeof s === 'string' ? Buffer.from(s, 'latin1') : Buffer.from(s));
/** A cell of an Avro string (schema id 0). */
export const str = (family: string, qualifier: string, value: string, timestamp?: number): EncodedCell => ({
  kind: 'value',
  family,
  qualifier,
  timestamp,
  schemaId: 0,
  json: JSON.stringify(value),
});
const int = (family: string, qualifier: string, value: number, timestamp?: number): EncodedCell => ({
  kind: 'value',
  family,
  qualifier,
  timestamp,
  schemaId: 2,
  json: String(value),
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
    t.same(
      meta.schemaTable.map((e) => e.id),
      [0, 1, 2, 3, 4, 5, 6, 7],
    );
    t.same(
      meta.tables.map((x) => x.name),
      ['raw'],
    );
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

  t.test(
    'regression: names of any length are "not found" or refused, never a store failure (4,087 characters answered 500; fuzz seed 105114693)',
    async (t) => {
      for (const n of [256, 1000, 1978, 4087, 4096, 9000]) {
        const name = 'a'.repeat(n);
        await t.rejects(store.instanceMetadata(name), { code: 'RG_ERR_INSTANCE_NOT_FOUND' }, `instance name of ${n} characters`);
        await t.rejects(store.getLayout(instance, name), { code: 'RG_ERR_TABLE_NOT_FOUND' }, `table name of ${n} characters`);
        await t.rejects(store.createInstance(name), { code: 'RG_ERR_BAD_PARAMETER' }, `creating an instance named with ${n} characters`);
      }
      await t.rejects(store.getLayout(instance, 'bad name/x'), { code: 'RG_ERR_TABLE_NOT_FOUND' });
      await store.createInstance('b'.repeat(255));
      t.ok((await store.listInstances()).includes('b'.repeat(255)), 'a 255-character instance name is allowed');
    },
  );

  t.test('schema table: new schemas get 8, 9, ...; one id per schema; ids resolve back', async (t) => {
    const schemas = await store.schemaTable(instance);
    const a = await schemas.idOf('{"type":"array","items":"string"}');
    const b = await schemas.idOf('{"type":"map","values":"long"}');
    t.equal(a, 8);
    t.equal(b, 9);
    t.equal(await schemas.idOf('{"type":"array","items":"string"}'), 8);
    t.equal(await schemas.schemaOf(9), '{"type":"map","values":"long"}');
    t.equal(await schemas.schemaOf(99), undefined);
    t.same(
      (await schemas.entries()).map((e) => e.id),
      [0, 1, 2, 3, 4, 5, 6, 7, 8, 9],
    );
  });

  t.test('point get: selected cells sorted by family and qualifier, newest first; a missing row has no cells', async (t) => {
    await store.write(instance, 'raw', [
      {
        rowKey: key('alice'),
        cells: [
          str('info', 'name', 'Alice', 10),
          str('info', 'name', 'Alicia', 20),
          int('info', 'age', 30, 10),
          str('tags', 'z', 'last', 5),
          str('tags', 'a', 'first', 5),
        ],
      },
    ]);
    const [row, missing] = await store.get(instance, 'raw', [key('alice'), key('bob')], EVERY_VERSION);
    t.same(cellsOf(row!), ['info:age@10=30', 'info:name@20="Alicia"', 'info:name@10="Alice"', 'tags:a@5="first"', 'tags:z@5="last"']);
    t.same(missing!.cells, []);
    t.equal(missing!.rowKey.toString(), 'bob');
    const [latest] = await store.get(instance, 'raw', [key('alice')], ALL);
    t.same(cellsOf(latest!), ['info:age@10=30', 'info:name@20="Alicia"', 'tags:a@5="first"', 'tags:z@5="last"']);
  });

  /**
   * Every read option, table-driven, through get(), scan() and scanChunks() (where the store has
   * it), on rows with several versions, a counter, columns trimmed by max_versions (info, tags: 3)
   * and a column expired by its locality group's TTL (recent: 60 s).
   */
  t.test('reads push down cols, versions, timerange, TTL and max_versions, the same through get, scan and scanChunks', async (t) => {
    const now = Date.now();
    await store.write(instance, 'raw', [
      {
        rowKey: key('r'),
        cells: [
          ...[1, 2, 3].map((ts) => str('info', 'name', `v${ts}`, ts)),
          str('tags', 'x', 'tx', 2),
          { kind: 'counter-set', family: 'info', qualifier: 'visits', value: 7n, timestamp: 1 },
          { kind: 'counter-set', family: 'info', qualifier: 'visits', value: 9n, timestamp: 2 },
        ],
      },
    ]);
    await store.write(instance, 'raw', [
      {
        rowKey: key('t'),
        cells: [
          { kind: 'value', family: 'recent', qualifier: 'old', timestamp: now - 3_600_000, schemaId: 3, json: '1' },
          { kind: 'value', family: 'recent', qualifier: 'new', timestamp: now, schemaId: 3, json: '2' },
          str('info', 'name', 'kept forever', 1),
        ],
      },
    ]);
    // max_versions 3: five writes of one version each, then one write of six versions.
    for (let ts = 1; ts <= 5; ts++) await store.write(instance, 'raw', [{ rowKey: key('v'), cells: [str('info', 'name', `v${ts}`, ts)] }]);
    await store.write(instance, 'raw', [{ rowKey: key('v'), cells: [1, 2, 3, 4, 5, 6].map((ts) => str('tags', 'k', `k${ts}`, ts + 100)) }]);

    const name = (ts: number): string => `info:name@${ts}="v${ts}"`;
    const k = (ts: number): string => `tags:k@${ts + 100}="k${ts}"`;
    const x = 'tags:x@2="tx"';
    const visits = 'info:visits@2=9';
    const kept = 'info:name@1="kept forever"';
    const fresh = `recent:new@${now}=2`;
    const cases: { name: string; read: ReadSpec; r: string[]; t: string[]; v: string[] }[] = [
      {
        name: 'every version',
        read: EVERY_VERSION,
        r: [name(3), name(2), name(1), visits, x],
        t: [kept, fresh],
        v: [name(5), name(4), name(3), k(6), k(5), k(4)],
      },
      { name: 'latest version', read: ALL, r: [name(3), visits, x], t: [kept, fresh], v: [name(5), k(6)] },
      { name: 'two versions', read: { ...ALL, maxVersions: 2 }, r: [name(3), name(2), visits, x], t: [kept, fresh], v: [name(5), name(4), k(6), k(5)] },
      { name: 'a family', read: { ...EVERY_VERSION, columns: [{ family: 'tags' }] }, r: [x], t: [], v: [k(6), k(5), k(4)] },
      {
        name: 'a column, two versions',
        read: { ...ALL, columns: [{ family: 'info', qualifier: 'name' }], maxVersions: 2 },
        r: [name(3), name(2)],
        t: [kept],
        v: [name(5), name(4)],
      },
      {
        name: 'two columns of two families',
        read: {
          ...ALL,
          columns: [
            { family: 'tags', qualifier: 'k' },
            { family: 'info', qualifier: 'visits' },
          ],
        },
        r: [visits],
        t: [],
        v: [k(6)],
      },
      { name: 'a declared column without cells', read: { ...EVERY_VERSION, columns: [{ family: 'info', qualifier: 'age' }] }, r: [], t: [], v: [] },
      { name: 'timerange [2, 3), every version', read: { ...EVERY_VERSION, minTimestamp: 2, maxTimestamp: 3 }, r: [name(2), visits, x], t: [], v: [] },
      // Versions beyond max_versions stay hidden inside a time range (v's name@2 and @1 were trimmed; on a store with lazy GC they are still stored).
      { name: 'timerange [0, 3), latest: versions count within the range', read: { ...ALL, maxTimestamp: 3 }, r: [name(2), visits, x], t: [kept], v: [] },
      { name: 'timerange from 4, every version', read: { ...EVERY_VERSION, minTimestamp: 4 }, r: [], t: [fresh], v: [name(5), name(4), k(6), k(5), k(4)] },
      {
        name: 'a counter before its latest value',
        read: { ...ALL, columns: [{ family: 'info', qualifier: 'visits' }], maxTimestamp: 2 },
        r: ['info:visits@1=7'],
        t: [],
        v: [],
      },
      { name: 'the TTL family: the expired column is never read', read: { ...EVERY_VERSION, columns: [{ family: 'recent' }] }, r: [], t: [fresh], v: [] },
      { name: 'the expired column alone', read: { ...EVERY_VERSION, columns: [{ family: 'recent', qualifier: 'old' }] }, r: [], t: [], v: [] },
    ];
    const layout = await store.getLayout(instance, 'raw');
    for (const c of cases) {
      const got = await store.get(instance, 'raw', [key('r'), key('t'), key('v'), key('missing')], c.read);
      t.same(got.map(cellsOf), [c.r, c.t, c.v, []], `${c.name}: get`);
      const want = (['r', 't', 'v'] as const).filter((n) => c[n].length > 0);
      const scanned = await collect(store.scan(instance, 'raw', { limit: -1, read: c.read }));
      t.same(
        scanned.map((row) => [row.rowKey.toString(), ...cellsOf(row)]),
        want.map((n) => [n, ...c[n]]),
        `${c.name}: scan (rows without a selected cell skipped)`,
      );
      const ranged = await collect(store.scan(instance, 'raw', { start: key('s'), limit: 1, read: c.read }));
      t.same(
        ranged.map((row) => row.rowKey.toString()),
        want.filter((n) => n > 's').slice(0, 1),
        `${c.name}: scan from "s", limit 1`,
      );
      if (store.scanChunks) {
        for (const revision of [3, 1] as const) {
          const serialize = rowSerializer(layout.keyFormat, revision);
          const chunks: Buffer[] = [];
          let rows = 0;
          for await (const chunk of store.scanChunks(instance, 'raw', { limit: -1, read: c.read }, rowRenderSpec(revision))) {
            chunks.push(chunk.bytes);
            rows += chunk.rows;
          }
          t.equal(
            Buffer.concat(chunks).toString('utf8'),
            scanned.map((row) => serialize(row) + ROW_TERMINATOR).join(''),
            `${c.name}: scanChunks, revision ${revision}`,
          );
          t.equal(rows, want.length);
        }
      }
    }
    t.equal(store.openScans, 0);
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
    await store.write(
      instance,
      'raw',
      shuffled.map((n) => ({ rowKey: key(n), cells: [str('info', 'name', Buffer.from(n).toString('hex'), 1)] })),
    );
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
    await store.write(
      instance,
      'raw',
      ['apple', 'apricot', 'banana', 'avocado', 'apex'].map((n) => ({ rowKey: key(n), cells: [str('info', 'name', n, 1)] })),
    );
    const filter: RowKeyFilter = { prefix: key('ap'), matches: (k) => k.toString().endsWith('e') || k.toString().endsWith('x') };
    const rows = await collect(store.scan(instance, 'raw', { filter, limit: -1, read: ALL }));
    t.same(
      rows.map((r) => r.rowKey.toString()),
      ['apex', 'apple'],
    );
    const limited = await collect(store.scan(instance, 'raw', { filter: { matches: () => true }, limit: 2, read: ALL }));
    t.same(
      limited.map((r) => r.rowKey.toString()),
      ['apex', 'apple'],
    );
  });

  t.test('scan: a wildcard entity id (compileWildcard) on a salted 2-component FORMATTED table, through scan and scanChunks', async (t) => {
    const layout = parseLayout(WILD_LAYOUT);
    await store.createTable(instance, layout);
    const format = layout.keyFormat;
    const rows: { s: string; n: bigint; rowKey: Buffer }[] = [];
    for (const s of ['a', 'b', 'ab', 'c\n', '', 'a\u00e9']) for (const n of [1n, 10n, -1n]) rows.push({ s, n, rowKey: encodeRowKey(format, [s, n]) });
    await store.write(
      instance,
      'wild',
      rows.map((r) => ({ rowKey: r.rowKey, cells: [str('info', 'q', `${r.s}/${r.n}`, 5), str('info', r.n === 10n ? 'ten' : 'other', 'x', 6)] })),
    );
    const inKeyOrder = [...rows].sort((a, b) => Buffer.compare(a.rowKey, b.rowKey));
    t.notSame(
      inKeyOrder.map((r) => r.s),
      [...inKeyOrder.map((r) => r.s)].sort(),
      'the salt orders rows apart from their components',
    );
    const text = (rowKey: Buffer, cells: readonly string[]): string => `${rowKey.toString('hex')} ${cells.join(' ')}`;
    const cases: { pattern: (ComponentValue | Wildcard)[]; keep: (r: { s: string; n: bigint }) => boolean; limit?: number; read?: ReadSpec; none?: true }[] = [
      { pattern: [WILDCARD, 10n], keep: (r) => r.n === 10n },
      { pattern: [WILDCARD, 10n], keep: (r) => r.n === 10n, limit: 2 },
      { pattern: ['a', WILDCARD], keep: (r) => r.s === 'a' },
      { pattern: ['ab'], keep: (r) => r.s === 'ab' },
      { pattern: ['', WILDCARD], keep: (r) => r.s === '' },
      { pattern: [WILDCARD, WILDCARD], keep: () => true, limit: 7 },
      { pattern: ['zz', WILDCARD], keep: () => false, none: true },
      // Rows that match but have no selected cell are skipped and do not count against the limit.
      { pattern: [WILDCARD, WILDCARD], keep: (r) => r.n === 10n, limit: 4, read: { ...ALL, columns: [{ family: 'info', qualifier: 'ten' }] } },
    ];
    for (const c of cases) {
      const filter = compileWildcard(format, c.pattern);
      const read = c.read ?? ALL;
      const request = { filter, limit: c.limit ?? -1, read };
      const matching = inKeyOrder.filter(c.keep).slice(0, c.limit ?? Infinity);
      const [want, got] = [
        await store.get(
          instance,
          'wild',
          matching.map((r) => r.rowKey),
          read,
        ),
        await collect(store.scan(instance, 'wild', request)),
      ];
      const label = `${JSON.stringify(c.pattern, (_k, v: unknown) => (typeof v === 'bigint' ? Number(v) : v))} limit ${request.limit}`;
      t.equal(want.length > 0, !c.none, `${label}: ${want.length} rows match`);
      t.same(
        got.map((r) => text(r.rowKey, cellsOf(r))),
        want.map((r) => text(r.rowKey, cellsOf(r))),
        `${label}: scan`,
      );
      if (store.scanChunks) {
        const serialize = rowSerializer(format, 3);
        let chunks = '';
        for await (const chunk of store.scanChunks(instance, 'wild', request, rowRenderSpec(3))) chunks += chunk.bytes.toString('utf8');
        t.equal(chunks, want.map((r) => serialize(r) + ROW_TERMINATOR).join(''), `${label}: scanChunks`);
      }
    }
    t.equal(store.openScans, 0);
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
    for await (const batch of abandoned) {
      t.ok(batch.length > 0);
      break;
    }
    t.equal(store.openScans, 0, 'for-await break releases the scan');
  });

  t.test('writes: a batch is atomic, a failing cell leaves nothing written', async (t) => {
    await store.write(instance, 'raw', [
      { rowKey: key('c'), cells: [{ kind: 'counter-set', family: 'info', qualifier: 'visits', value: 2n ** 63n - 1n, timestamp: 1 }] },
    ]);
    await t.rejects(
      store.write(instance, 'raw', [
        { rowKey: key('first'), cells: [str('info', 'name', 'should vanish', 1)] },
        { rowKey: key('c'), cells: [{ kind: 'counter-increment', family: 'info', qualifier: 'visits', delta: 1n }] },
      ]),
      { code: 'RG_ERR_BAD_COUNTER' },
    );
    const [first] = await store.get(instance, 'raw', [key('first')], ALL);
    t.same(first!.cells, []);
    await t.rejects(store.write(instance, 'raw', [{ rowKey: Buffer.alloc(5000, 1), cells: [str('info', 'name', 'x', 1)] }]), {
      code: 'RG_ERR_ROW_KEY_TOO_LONG',
    });
  });

  t.test('an unknown family is rejected with nothing written, in a write and in a delete', async (t) => {
    await store.write(instance, 'raw', [{ rowKey: key('keep'), cells: [str('info', 'name', 'kept', 1)] }]);
    await t.rejects(
      store.write(instance, 'raw', [
        { rowKey: key('new'), cells: [str('info', 'name', 'should vanish', 1)] },
        { rowKey: key('keep'), cells: [str('info', 'name', 'should vanish too', 2), str('nosuch', 'q', 'x', 1)] },
      ]),
      { code: 'RG_ERR_UNKNOWN_COLUMN' },
    );
    const readBack = async (): Promise<string[][]> => (await store.get(instance, 'raw', [key('new'), key('keep')], EVERY_VERSION)).map(cellsOf);
    t.same(await readBack(), [[], ['info:name@1="kept"']], 'write: no row of the batch was written');
    for (const bad of [
      { rowKey: key('keep'), family: 'nosuch' },
      { rowKey: key('keep'), family: 'nosuch', qualifier: 'q' },
      { rowKey: key('keep'), family: 'nosuch', qualifier: 'q', upToTimestamp: 5 },
    ]) {
      await t.rejects(store.delete(instance, 'raw', [{ rowKey: key('keep') }, bad]), { code: 'RG_ERR_BAD_COLUMNS' }, `delete naming ${JSON.stringify(bad)}`);
    }
    t.same(await readBack(), [[], ['info:name@1="kept"']], 'delete: the row deleted alongside is untouched');
  });

  t.test('counters: set, increment atomically, negative increments, only the latest value is read', async (t) => {
    const visits = (n: bigint): EncodedCell => ({ kind: 'counter-increment', family: 'info', qualifier: 'visits', delta: n });
    await store.write(instance, 'raw', [{ rowKey: key('k'), cells: [{ kind: 'counter-set', family: 'info', qualifier: 'visits', value: 0n, timestamp: 0 }] }]);
    await Promise.all(Array.from({ length: 40 }, () => store.write(instance, 'raw', [{ rowKey: key('k'), cells: [visits(3n)] }])));
    await store.write(instance, 'raw', [{ rowKey: key('k'), cells: [visits(-20n)] }]);
    const [row] = await store.get(instance, 'raw', [key('k')], EVERY_VERSION);
    t.same(
      row!.cells.map((c) => [c.qualifier, c.json, c.schemaId]),
      [['visits', '100', 3]],
    );
    await store.write(instance, 'raw', [{ rowKey: key('fresh'), cells: [visits(9007199254740993n)] }]);
    const [fresh] = await store.get(instance, 'raw', [key('fresh')], ALL);
    t.equal(fresh!.cells[0]!.json, '9007199254740993', 'beyond 2^53 stays exact');
  });

  t.test('deletes: a row, a family, a column, and versions up to a timestamp', async (t) => {
    const row = (name: string) => ({
      rowKey: key(name),
      cells: [str('info', 'name', 'a', 1), str('info', 'name', 'b', 2), str('info', 'name', 'c', 3), int('info', 'age', 7, 1), str('tags', 't', 'x', 1)],
    });
    await store.write(instance, 'raw', ['d1', 'd2', 'd3', 'd4'].map(row));
    await store.delete(instance, 'raw', [{ rowKey: key('d1') }]);
    await store.delete(instance, 'raw', [{ rowKey: key('d2'), family: 'info' }]);
    await store.delete(instance, 'raw', [{ rowKey: key('d3'), family: 'info', qualifier: 'name' }]);
    await store.delete(instance, 'raw', [{ rowKey: key('d4'), family: 'info', qualifier: 'name', upToTimestamp: 2 }]);
    const rows = await store.get(
      instance,
      'raw',
      ['d1', 'd2', 'd3', 'd4'].map((k) => key(k)),
      EVERY_VERSION,
    );
    t.same(rows.map(cellsOf), [[], ['tags:t@1="x"'], ['info:age@1=7', 'tags:t@1="x"'], ['info:age@1=7', 'info:name@3="c"', 'tags:t@1="x"']]);
    await store.delete(instance, 'raw', [{ rowKey: key('d4'), upToTimestamp: 1 }]);
    t.same(cellsOf((await store.get(instance, 'raw', [key('d4')], EVERY_VERSION))[0]!), ['info:name@3="c"']);
  });

  t.test(
    'over-long keys on reads: a point get of a key no write accepts is a missing row; scan bounds of any length select exactly [start, end) (lmdb-js threw "Key of size 3006 was too large")',
    async (t) => {
      const m = store.maxRowKeyBytes;
      const k = (n: number, last = ''): Buffer => Buffer.concat([Buffer.alloc(n, 'k'), key(last)]);
      const zeros = (n: number, last: number[] = []): Buffer => Buffer.concat([Buffer.alloc(n, 0), Buffer.from(last)]);
      // In byte order. `longest` is the longest key the store takes; z0/z1 are escaped on LMDB (00 -> 00 FF).
      const rows: [string, Buffer][] = [
        ['z0', zeros(400)],
        ['z1', zeros(399, [1])],
        ['a', key('a')],
        ['below', k(m - 1, 'j')],
        ['longest', k(m)],
        ['above', k(m - 1, 'l')],
        ['z', key('z')],
      ];
      await store.write(
        instance,
        'raw',
        rows.map(([name, rowKey]) => ({ rowKey, cells: [str('tags', 't', name, 1)] })),
      );
      const names = new Map(rows.map(([name, rowKey]) => [rowKey.toString('hex'), name]));
      const scanNames = async (start: Buffer | undefined, end: Buffer | undefined): Promise<string[]> =>
        (await collect(store.scan(instance, 'raw', { start, end, limit: -1, read: ALL }))).map(
          (r) => names.get(r.rowKey.toString('hex')) ?? `unexpected ${r.rowKey.length}-byte key`,
        );

      const got = await store.get(instance, 'raw', [k(m, 'x'), k(20_000), zeros(m), k(m)], ALL);
      t.same(
        got.map((r) => r.cells.length),
        [0, 0, 0, 1],
        'keys over maxRowKeyBytes (and one no write could store) are missing rows; the others are read',
      );
      t.same(
        got.map((r) => r.rowKey.length),
        [m + 1, 20_000, m, m],
        'each answered under its own key',
      );

      t.same(await scanNames(k(m, 'x'.repeat(2000)), undefined), ['above', 'z'], 'a start bound longer than any key: a stored key it extends sorts before it');
      t.same(await scanNames(undefined, k(m, 'x'.repeat(2000))), ['z0', 'z1', 'a', 'below', 'longest'], 'an end bound longer than any key');
      t.same(await scanNames(k(m - 1, 'j'.concat('x'.repeat(3000))), Buffer.concat([k(m), zeros(3000)])), ['longest'], 'both bounds over-long');
      t.same(await scanNames(zeros(m + 2000), undefined), ['z1', 'a', 'below', 'longest', 'above', 'z'], 'an over-long start of 00 bytes');
      t.same(await scanNames(undefined, zeros(m + 2000)), ['z0'], 'an over-long end of 00 bytes');
      t.same(await scanNames(k(20_000), Buffer.alloc(20_000, 'l')), ['above'], '20,000-byte bounds');
      t.equal(store.openScans, 0);
    },
  );

  t.test('regression: deleting a column whose qualifier is longer than any stored key deletes nothing (was a 500 from lmdb-js)', async (t) => {
    await store.write(instance, 'raw', [{ rowKey: key('q1'), cells: [str('tags', 't', 'x', 1)] }]);
    for (const n of [1978, 4087, 20_000]) {
      await store.delete(instance, 'raw', [{ rowKey: key('q1'), family: 'tags', qualifier: 'q'.repeat(n) }]);
      await store.delete(instance, 'raw', [{ rowKey: Buffer.alloc(store.maxRowKeyBytes, 7), family: 'tags', qualifier: 'q'.repeat(n) }]);
    }
    t.same(cellsOf((await store.get(instance, 'raw', [key('q1')], EVERY_VERSION))[0]!), ['tags:t@1="x"'], 'the row is untouched');
  });
}
