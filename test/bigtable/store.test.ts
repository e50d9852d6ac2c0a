/**
 * The store conformance suite, unchanged, against the Bigtable store on a cbtemulator this file
 * starts (skipped, saying what is missing, when the emulator is not installed); then the
 * Bigtable-specific behaviour: pushdown, GC rules, sharing between two store objects, errors.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import t from 'tap';
import { parseLayout } from '../../lib/model/layout/layout.js';
import { encodeRowKey } from '../../lib/model/keys/row-key.js';
import { FOREVER, WILDCARD, type ComponentValue, type ReadSpec, type RowKeyFormat, type RowOut, type RowWrite, type Wildcard } from '../../lib/model/types.js';
import { compileWildcard } from '../../lib/model/keys/wildcard.js';
import { Bigtable } from '@google-cloud/bigtable';
import { BigtableStore, bigtableTableId } from '../../lib/store/bigtable/bigtable-store.js';
import { LmdbStore } from '../../lib/store/lmdb/lmdb-store.js';
import { openStore } from '../../lib/store/open-store.js';
import type { RowScan } from '../../lib/store/store.js';
import { prng, randomWildcardPattern } from '../model/key-fixtures.js';
import { EMULATOR_MISSING, startEmulator } from '../store/bigtable-emulator.js';
import { RAW_LAYOUT, storeConformance } from '../store/conformance.js';

const emulator = await startEmulator();
if (!emulator) {
  t.test('Bigtable store conformance', { skip: EMULATOR_MISSING }, async () => undefined);
} else {
  t.teardown(() => emulator.stop());
  let prefix = 0;
  // A fresh table prefix per test: every test sees an empty store, as with a new LMDB directory.
  storeConformance(t, () => BigtableStore.open({ projectId: 'test', instanceId: 'conformance', tablePrefix: `c${++prefix}` }));

  const ALL: ReadSpec = { maxVersions: FOREVER, minTimestamp: 0, maxTimestamp: Number.MAX_SAFE_INTEGER };
  const cellsOf = (row: RowOut): string[] => row.cells.map((c) => `${c.family}:${c.qualifier}@${c.timestamp}=${c.json}`);

  t.test('two store objects over one Bigtable share instances, tables, rows and the schema table', async (t) => {
    const config = { kind: 'bigtable', projectId: 'test', instanceId: 'shared', tablePrefix: 'shared' } as const;
    const a = await openStore(config);
    const b = await openStore(config);
    t.teardown(async () => {
      await a.close();
      await b.close();
    });
    await a.createInstance('i');
    await t.rejects(b.createInstance('i'), { code: 'RG_ERR_INSTANCE_EXISTS' });
    await b.createTable('i', parseLayout(RAW_LAYOUT));
    t.same(await a.listTables('i'), ['raw']);
    await a.write('i', 'raw', [
      { rowKey: Buffer.from('k'), cells: [{ kind: 'value', family: 'info', qualifier: 'name', timestamp: 1, schemaId: 0, json: '"x"' }] },
    ]);
    t.same(cellsOf((await b.get('i', 'raw', [Buffer.from('k')], ALL))[0]!), ['info:name@1="x"']);
    const [sa, sb] = [await a.schemaTable('i'), await b.schemaTable('i')];
    const schemas = Array.from({ length: 12 }, (_, i) => `{"type":"fixed","name":"F${i}","size":${i + 1}}`);
    const ids = await Promise.all(schemas.flatMap((s) => [sa.idOf(s), sb.idOf(s)]));
    for (let i = 0; i < schemas.length; i++) t.equal(ids[2 * i], ids[2 * i + 1], `one id for schema ${i} from both`);
    t.equal(new Set(ids).size, schemas.length, 'distinct schemas, distinct ids');
    const entries = await sb.entries();
    t.equal(entries.length, 8 + schemas.length, 'no duplicate or orphan entries');
    for (const s of schemas) t.equal(entries.filter((e) => e.json === s).length, 1);
  });

  t.test('metadata lists tables with their layouts; unknown instance or table names are 404 codes', async (t) => {
    const store = await BigtableStore.open({ projectId: 'test', instanceId: 'meta', tablePrefix: 'm' });
    t.teardown(() => store.close());
    await store.createInstance('i');
    await store.createTable('i', parseLayout(RAW_LAYOUT));
    const meta = await store.instanceMetadata('i');
    t.same(
      meta.tables.map((x) => x.name),
      ['raw'],
    );
    t.same(parseLayout(meta.tables[0]!.layout).desc, meta.tables[0]!.layout);
    await t.rejects(store.get('i', 'nosuch', [Buffer.from('a')], ALL), { code: 'RG_ERR_TABLE_NOT_FOUND' });
    await t.rejects(store.write('i', 'no/such', []), { code: 'RG_ERR_TABLE_NOT_FOUND' });
    await t.rejects(store.scan('nosuch', 'raw', { limit: -1, read: ALL }).next(), { code: 'RG_ERR_INSTANCE_NOT_FOUND' });
    t.equal(store.openScans, 0);
  });

  t.test('a scan that stops early cancels its stream; a limited scan without a filter reads only what it needs', async (t) => {
    const store = await BigtableStore.open({ projectId: 'test', instanceId: 'scan', tablePrefix: 's' });
    t.teardown(() => store.close());
    await store.createInstance('i');
    await store.createTable('i', parseLayout(RAW_LAYOUT));
    await store.write(
      'i',
      'raw',
      Array.from({ length: 3000 }, (_, n) => ({
        rowKey: Buffer.from(`r${String(n).padStart(5, '0')}`),
        cells: [{ kind: 'value' as const, family: 'info', qualifier: 'age', timestamp: 1, schemaId: 2, json: String(n) }],
      })),
    );
    const scan = store.scan('i', 'raw', { limit: -1, read: ALL });
    const first = await scan.next();
    t.ok(!first.done && first.value.length > 0 && first.value.length <= 256);
    await scan.return();
    t.equal(store.openScans, 0);
    const limited: RowOut[] = [];
    for await (const batch of store.scan('i', 'raw', {
      start: Buffer.from('r01000'),
      limit: 300,
      read: { ...ALL, columns: [{ family: 'info', qualifier: 'age' }] },
    }))
      limited.push(...batch);
    t.equal(limited.length, 300);
    t.equal(limited[0]!.rowKey.toString(), 'r01000');
    t.equal(limited[299]!.cells[0]!.json, '1299');
  });

  t.test('scans read ReadRows as wire bytes: batches of up to 256 rows, every cell intact; a ReadRows failure is a coded error', async (t) => {
    const store = await BigtableStore.open({ projectId: 'test', instanceId: 'wire', tablePrefix: 'w' });
    t.teardown(() => store.close());
    await store.createInstance('i');
    await store.createTable('i', parseLayout(RAW_LAYOUT));
    const rows = 1000;
    await store.write(
      'i',
      'raw',
      Array.from({ length: rows }, (_, n) => ({
        rowKey: Buffer.from(`r${String(n).padStart(4, '0')}`),
        cells: [
          { kind: 'value' as const, family: 'info', qualifier: 'name', timestamp: 1_700_000_000_000 + n, schemaId: 0, json: JSON.stringify(`n\u00e9${n}`) },
          { kind: 'value' as const, family: 'tags', qualifier: `t${n % 7}`, timestamp: n, schemaId: 0, json: JSON.stringify('x'.repeat(n)) },
        ],
      })),
    );
    const sizes: number[] = [];
    const seen: RowOut[] = [];
    for await (const batch of store.scan('i', 'raw', { limit: -1, read: ALL })) {
      sizes.push(batch.length);
      seen.push(...batch);
    }
    t.equal(seen.length, rows);
    // Batches wait (at most 20 ms each) for more rows instead of handing over the one or two that
    // arrived (one socket write each): 241,240,198,192,129 on a loaded machine. The bound here
    // holds down to 400 rows/s.
    t.ok(sizes.length <= rows / 8 && Math.max(...sizes) <= 256, `batched: ${sizes.join(',')}`);
    t.same(cellsOf(seen[999]!), [`info:name@${1_700_000_000_999}="n\u00e9999"`, `tags:t5@999=${JSON.stringify('x'.repeat(999))}`]);
    // The Bigtable table removed behind the store's back: the scan fails with a coded error and closes.
    const bigtable = new Bigtable({ projectId: 'test', metricsEnabled: false });
    await bigtable
      .instance('wire')
      .table(bigtableTableId('w', 'i', 'raw'))
      .delete();
    await bigtable.close();
    await t.rejects(store.scan('i', 'raw', { limit: -1, read: ALL }).next(), { code: 'RG_ERR_TABLE_NOT_FOUND' });
    t.equal(store.openScans, 0);
  });

  t.test('an unreachable Bigtable is a 503 store-unavailable error, never a raw driver message', async (t) => {
    const saved = process.env.BIGTABLE_EMULATOR_HOST;
    process.env.BIGTABLE_EMULATOR_HOST = '127.0.0.1:9';
    try {
      const err = await BigtableStore.open({ projectId: 'test', instanceId: 'down', tablePrefix: 'd' }).then(
        () => undefined,
        (e: unknown) => e as { code?: string; status?: number; message: string },
      );
      t.equal(err?.code, 'RG_ERR_STORE_UNAVAILABLE');
      t.equal(err?.status, 503);
      t.match(err?.message ?? '', /retry later/);
      t.notMatch(err?.message ?? '', /ECONNREFUSED|No connection established/);
    } finally {
      process.env.BIGTABLE_EMULATOR_HOST = saved;
    }
  });

  /** Four components, two nullable: STRING keys with regex metacharacters, numbers whose bytes are 00, 0a, ff. */
  const WILD_LAYOUT = `{
    name: "wild",
    keys_format: {encoding: "FORMATTED", salt: {hash_size: 2}, range_scan_start_index: 1, nullable_start_index: 2,
      components: [{name: "s", type: "STRING"}, {name: "i", type: "INTEGER"}, {name: "l", type: "LONG"}, {name: "t", type: "STRING"}]},
    locality_groups: [{name: "default", in_memory: false, max_versions: 3, ttl_seconds: 2147483647, compression_type: "NONE",
      families: [{name: "info", map_schema: {type: "INLINE", value: '"string"'}}]}],
    version: "layout-1.1.0"
  }`;
  const collect = async (scan: RowScan): Promise<RowOut[]> => {
    const rows: RowOut[] = [];
    for await (const batch of scan) rows.push(...batch);
    return rows;
  };
  const rowsText = (rows: readonly RowOut[]): string[] => rows.map((r) => `${r.rowKey.toString('hex')} ${cellsOf(r).join(' ')}`);

  t.test("wildcard entity ids are pushed down as a row-key regex: Bigtable sends only matching rows, and the results equal LMDB's", async (t) => {
    const bt = await BigtableStore.open({ projectId: 'test', instanceId: 'wild', tablePrefix: 'wild' });
    const dir = mkdtempSync(join(tmpdir(), 'rowgate-wild-'));
    const lmdb = new LmdbStore({ path: dir, noSync: true });
    t.teardown(async () => {
      await bt.close();
      await lmdb.close();
      rmSync(dir, { recursive: true, force: true });
    });
    const layout = parseLayout(WILD_LAYOUT);
    const format = layout.keyFormat as Extract<RowKeyFormat, { encoding: 'FORMATTED' }>;
    for (const store of [bt, lmdb]) {
      await store.createInstance('i');
      await store.createTable('i', layout);
    }
    const rand = prng(606);
    const pick = <T>(values: readonly T[]): T => values[Math.floor(rand() * values.length)]!;
    const strings = ['', 'a', '.', '.*', '\n', '\\x00', '(?:a|b)', '[^x]', 'a+?', '{2}', '$', 'ÿ', '€', '😀', 'ab'];
    const ints = [-2147483648, 2147483647, 10, 0, -1, 255];
    const longs = [-(2n ** 63n), 2n ** 63n - 1n, 10n, 0n, 0xffn];
    const tails = ['', 'x', '.', '\u00ff\n'];
    const rows: RowWrite[] = [];
    const seen = new Set<string>();
    const add = (rowKey: Buffer, value: string): void => {
      if (rowKey.length === 0 || seen.has(rowKey.toString('hex'))) return;
      seen.add(rowKey.toString('hex'));
      rows.push({ rowKey, cells: [{ kind: 'value', family: 'info', qualifier: 'q', timestamp: 5, schemaId: 0, json: JSON.stringify(value) }] });
    };
    for (let n = 0; n < 700; n++) {
      const present = 2 + Math.floor(rand() * 3);
      const components = [pick(strings), pick(ints), pick(longs), pick(tails)].map((c, i) => (i < present ? c : null)) as ComponentValue[];
      const key = encodeRowKey(format, components);
      add(key, `row ${n}`);
      // Malformed keys next to well-formed ones (raw keys may be written to any table): cut short,
      // one byte more, last STRING terminator missing.
      if (n % 7 === 0) add(key.subarray(0, 1 + Math.floor(rand() * (key.length - 1))), `short ${n}`);
      if (n % 11 === 0) add(Buffer.concat([key, Buffer.from([pick([0x00, 0xff, 0x0a, 0x2e])])]), `long ${n}`);
      if (n % 13 === 0 && key[key.length - 1] === 0) add(key.subarray(0, key.length - 1), `unterminated ${n}`);
    }
    add(Buffer.from([0xff]), 'one byte');
    add(Buffer.from([0x00, 0xff]), 'salt only');
    for (let i = 0; i < rows.length; i += 500) {
      await bt.write('i', 'wild', rows.slice(i, i + 500));
      await lmdb.write('i', 'wild', rows.slice(i, i + 500));
    }
    const read: ReadSpec = { ...ALL, maxVersions: 1 };
    const compare = async (pattern: (ComponentValue | Wildcard)[], limit: number) => {
      const filter = compileWildcard(format, pattern);
      const before = bt.rowsReceived;
      const got = await collect(bt.scan('i', 'wild', { filter, limit, read }));
      const received = bt.rowsReceived - before;
      const want = await collect(lmdb.scan('i', 'wild', { filter, limit, read }));
      return { got: rowsText(got), want: rowsText(want), received };
    };

    // A leading wildcard: no prefix to narrow the range, yet only the matching rows come back.
    const leading = await compare([WILDCARD, 10], -1);
    t.ok(leading.want.length > 20 && leading.want.length < rows.length / 4, `${leading.want.length} of ${rows.length} rows match [[], 10]`);
    t.same(leading.got, leading.want);
    t.equal(leading.received, leading.want.length, 'Bigtable sent only the matching rows');
    const limited = await compare([WILDCARD, 10], 1);
    t.same(limited.got, leading.want.slice(0, 1));
    t.equal(limited.received, 1, 'rowsLimit pushed down with the regex');

    let mismatched = 0;
    let extra = 0;
    let matchedRows = 0;
    for (let p = 0; p < 120; p++) {
      // All four picks are drawn for every component (the seeded sequence of the patterns tested).
      const pattern = randomWildcardPattern(rand, Math.floor(rand() * 5), 2, (i) => [pick(strings), pick(ints), pick(longs), pick(tails)][i]!);
      const limit = rand() < 0.25 ? 1 + Math.floor(rand() * 5) : -1;
      const { got, want, received } = await compare(pattern, limit);
      matchedRows += want.length;
      if (JSON.stringify(got) !== JSON.stringify(want)) {
        if (mismatched++ < 3) t.same(got, want, `pattern ${compileWildcard(format, pattern).rowKeyRegex.toString('latin1')} limit ${limit}`);
      }
      if (received !== want.length) {
        if (extra++ < 3)
          t.fail(
            `pattern ${compileWildcard(format, pattern).rowKeyRegex.toString('latin1')} limit ${limit}: Bigtable sent ${received} rows for ${want.length}`,
          );
      }
    }
    t.equal(mismatched, 0, `120 patterns, ${matchedRows} matching rows in all: the same rows and cells as LMDB`);
    t.equal(extra, 0, 'Bigtable sent exactly the matching rows for every pattern');
    t.equal(bt.openScans, 0);
  });

  /** One family per kind of GC rule: versions only, TTL only, both (a union), neither. */
  const GC_LAYOUT = `{
    name: "gc",
    keys_format: {encoding: "RAW"},
    locality_groups: [
      {name: "v", in_memory: false, max_versions: 3, ttl_seconds: 2147483647, compression_type: "NONE",
       families: [{name: "versions", map_schema: {type: "INLINE", value: '"string"'}}]},
      {name: "t", in_memory: false, max_versions: 2147483647, ttl_seconds: 86400, compression_type: "NONE",
       families: [{name: "ttl", map_schema: {type: "INLINE", value: '"string"'}}]},
      {name: "b", in_memory: false, max_versions: 2, ttl_seconds: 60, compression_type: "NONE",
       families: [{name: "both", map_schema: {type: "INLINE", value: '"string"'}}, {name: "both2", map_schema: {type: "INLINE", value: '"string"'}}]},
      {name: "n", in_memory: false, max_versions: 2147483647, ttl_seconds: 2147483647, compression_type: "NONE",
       families: [{name: "forever", map_schema: {type: "INLINE", value: '"string"'}}]}
    ],
    version: "layout-1.0.0"
  }`;

  t.test(
    'column families get GC rules from max_versions and ttl_seconds (a union of both), and the emulator applies them after the ModifyColumnFamilies call',
    async (t) => {
      const store = await BigtableStore.open({ projectId: 'test', instanceId: 'gc', tablePrefix: 'gc' });
      const bigtable = new Bigtable({ projectId: 'test', metricsEnabled: false });
      t.teardown(async () => {
        await store.close();
        await bigtable.close();
      });
      await store.createInstance('i');
      await store.createTable('i', parseLayout(GC_LAYOUT));
      const table = bigtable.instance('gc').table(bigtableTableId('gc', 'i', 'gc'));
      const [families] = await table.getFamilies();
      const rules = Object.fromEntries(families.map((f) => [f.id, f.metadata?.gcRule ?? null]));
      t.same(Object.keys(rules).sort(), ['both', 'both2', 'forever', 'ttl', 'versions']);
      t.match(rules.versions, { maxNumVersions: 3 });
      t.notOk((rules.versions as Record<string, unknown>).maxAge);
      t.match(rules.ttl, { maxAge: { seconds: '86400' } });
      t.notOk((rules.ttl as Record<string, unknown>).maxNumVersions);
      for (const name of ['both', 'both2']) {
        const union = (rules[name] as { union?: { rules?: Record<string, unknown>[] } }).union?.rules ?? [];
        t.same(
          union.map((r) => JSON.stringify(r.maxNumVersions ?? r.maxAge)).sort(),
          ['2', '{"seconds":"60","nanos":0}'].sort(),
          `${name}: union of maxNumVersions and maxAge`,
        );
      }
      t.same(rules.forever ?? {}, {}, 'no limits: an empty GC rule');

      // GC on the emulator runs only once a ModifyColumnFamilies call was made (docs/bigtable.md, "Trying it on the emulator"):
      // with the store's call, versions beyond max_versions disappear from Bigtable itself, as a
      // read without any filter shows, within seconds.
      await store.write('i', 'gc', [
        {
          rowKey: Buffer.from('k'),
          cells: Array.from({ length: 6 }, (_, n) => ({
            kind: 'value' as const,
            family: 'versions',
            qualifier: 'q',
            timestamp: 1000 + n,
            schemaId: 0,
            json: `"${n}"`,
          })),
        },
      ]);
      const stored = async (): Promise<number> => {
        const [row] = await table.row('k').get({ decode: false });
        return ((row.data as Record<string, Record<string, unknown[]>>).versions?.q ?? []).length;
      };
      const deadline = Date.now() + 15_000;
      let count = await stored();
      while (count > 3 && Date.now() < deadline) {
        await new Promise((resolve) => setTimeout(resolve, 250));
        count = await stored();
      }
      t.equal(count, 3, 'Bigtable trimmed the versions to max_versions (GC ran: ModifyColumnFamilies was applied)');
      // What the store returns never depended on GC.
      t.same(cellsOf((await store.get('i', 'gc', [Buffer.from('k')], ALL))[0]!), ['versions:q@1005="5"', 'versions:q@1004="4"', 'versions:q@1003="3"']);
    },
  );

  t.test("a MutateRows entry Bigtable refuses is reported: a coded error naming the rows not applied, Bigtable's entry status as the cause", async (t) => {
    const store = await BigtableStore.open({ projectId: 'test', instanceId: 'entry', tablePrefix: 'e' });
    const bigtable = new Bigtable({ projectId: 'test', metricsEnabled: false });
    t.teardown(async () => {
      await store.close();
      await bigtable.close();
    });
    await store.createInstance('i');
    await store.createTable('i', parseLayout(RAW_LAYOUT));
    // The family removed behind the store's back: the layout still has it, Bigtable does not.
    await bigtable
      .instance('entry')
      .table(bigtableTableId('e', 'i', 'raw'))
      .family('tags')
      .delete();
    const cell = (family: string, qualifier: string) => ({ kind: 'value' as const, family, qualifier, timestamp: 7, schemaId: 0, json: '"v"' });
    const err = await store
      .write('i', 'raw', [
        { rowKey: Buffer.from('a'), cells: [cell('info', 'name'), cell('tags', 't')] },
        { rowKey: Buffer.from('b'), cells: [cell('info', 'name')] },
        { rowKey: Buffer.from('c'), cells: [cell('tags', 't')] },
      ])
      .then(
        () => undefined,
        (e: unknown) => e as { code?: string; status?: number; message: string; cause?: Error },
      );
    // The emulator answers INTERNAL "unknown family" for such an entry: the layout and Bigtable
    // disagree, which is not the client's doing, so a 500 (logged with its cause).
    t.equal(err?.code, 'RG_ERR_INTERNAL');
    t.equal(err?.status, 500);
    t.match(err?.message, /^writing table raw: 2 of 3 rows were not applied \(the other 1 were\); first: row key hex 61, INTERNAL/);
    t.notMatch(err?.message, /unknown family/);
    t.match(err?.cause?.message, /MutateRows entry statuses: INTERNAL: .*tags.* \(2 rows\)/);
    // Rows are applied one by one: the row without the missing family was written. (Row a is not
    // checked: the emulator applies an entry's mutations up to the failing one, so its info:name
    // landed; Bigtable applies a row's mutations all or none.)
    const [b] = await store.get('i', 'raw', [Buffer.from('b')], ALL);
    t.same(cellsOf(b!), ['info:name@7="v"']);
  });

  t.test(
    'cached layouts: a table Bigtable no longer has is dropped from the cache (re-created with another layout, it is read anew); a table still being created is not found and not cached',
    async (t) => {
      const config = { projectId: 'test', instanceId: 'stale', tablePrefix: 'st' };
      const a = await BigtableStore.open(config);
      const b = await BigtableStore.open(config);
      const bigtable = new Bigtable({ projectId: 'test', metricsEnabled: false });
      t.teardown(async () => {
        await a.close();
        await b.close();
        await bigtable.close();
      });
      await a.createInstance('i');
      const first = parseLayout(RAW_LAYOUT);
      await a.createTable('i', first);
      await a.write('i', 'raw', [
        { rowKey: Buffer.from('k'), cells: [{ kind: 'value', family: 'info', qualifier: 'name', timestamp: 1, schemaId: 0, json: '"x"' }] },
      ]);
      t.same([...(await b.getLayout('i', 'raw')).families.keys()], ['info', 'tags', 'recent'], 'b caches the first layout');
      t.equal(b.rowsReceived, 0);
      t.equal((await b.get('i', 'raw', [Buffer.from('k')], ALL))[0]!.cells.length, 1);

      // The table dropped behind both stores' backs (Bigtable table and meta row), then re-created
      // with another layout under the same name.
      await bigtable
        .instance('stale')
        .table(bigtableTableId('st', 'i', 'raw'))
        .delete();
      await bigtable.instance('stale').table('st.meta').row('table/i/raw').delete();
      await t.rejects(b.get('i', 'raw', [Buffer.from('k')], ALL), { code: 'RG_ERR_TABLE_NOT_FOUND' }, 'Bigtable says NOT_FOUND: b drops its cached layout');
      const second = parseLayout(RAW_LAYOUT.replace('{name: "recent", map_schema', '{name: "other", map_schema'));
      await a.createTable('i', second);
      t.same([...(await b.getLayout('i', 'raw')).families.keys()], ['info', 'tags', 'other'], 'b reads the new layout');
      const now = Date.now(); // family other has a TTL of 60 s
      await b.write('i', 'raw', [
        { rowKey: Buffer.from('k'), cells: [{ kind: 'value', family: 'other', qualifier: 'q', timestamp: now, schemaId: 2, json: '5' }] },
      ]);
      t.same(
        cellsOf((await a.get('i', 'raw', [Buffer.from('k')], ALL))[0]!),
        [`other:q@${now}=5`],
        'a, which re-created the table, reads it with the new layout',
      );

      // The same through a scan: the scan's NOT_FOUND drops the entry too.
      await a.scan('i', 'raw', { limit: -1, read: ALL }).next();
      await bigtable
        .instance('stale')
        .table(bigtableTableId('st', 'i', 'raw'))
        .delete();
      await bigtable.instance('stale').table('st.meta').row('table/i/raw').delete();
      await t.rejects(a.scan('i', 'raw', { limit: -1, read: ALL }).next(), { code: 'RG_ERR_TABLE_NOT_FOUND' });
      await t.rejects(
        a.getLayout('i', 'raw'),
        { code: 'RG_ERR_TABLE_NOT_FOUND', message: 'table raw not found in instance i' },
        'the meta table is read again',
      );
      await b.createTable('i', first);
      t.same([...(await a.getLayout('i', 'raw')).families.keys()], ['info', 'tags', 'recent']);

      // Two-phase creation: a meta row still marked `creating` (the claim made, the Bigtable table
      // not yet there) is a table not found, unlisted, and not cached: once the mark is gone, the
      // table is found.
      const meta = bigtable.instance('stale').table('st.meta');
      const record = JSON.stringify({
        layout: parseLayout(RAW_LAYOUT.replace('name: "raw"', 'name: "pending"')).desc,
        bigtable: bigtableTableId('st', 'i', 'pending'),
      });
      await meta.mutate([{ key: 'table/i/pending', method: 'insert', data: { m: { layout: Buffer.from(record), creating: Buffer.from('1') } } }]);
      await t.rejects(a.getLayout('i', 'pending'), { code: 'RG_ERR_TABLE_NOT_FOUND', message: 'table pending not found in instance i (it is being created)' });
      t.same(await a.listTables('i'), ['raw']);
      t.same(
        (await a.instanceMetadata('i')).tables.map((x) => x.name),
        ['raw'],
      );
      await t.rejects(b.createTable('i', parseLayout(RAW_LAYOUT.replace('name: "raw"', 'name: "pending"'))), {
        code: 'RG_ERR_TABLE_EXISTS',
        message: /being created, or its creation was interrupted/,
      });
      await bigtable.instance('stale').createTable(bigtableTableId('st', 'i', 'pending'), { families: ['info', 'tags', 'recent'] });
      await meta.row('table/i/pending').deleteCells(['m:creating']);
      t.same(await a.listTables('i'), ['pending', 'raw']);
      t.equal((await a.getLayout('i', 'pending')).name, 'pending');
      // A table created by the store has no mark left.
      const [rawRow] = await meta.row('table/i/raw').get({ decode: false });
      t.same(Object.keys((rawRow.data as Record<string, Record<string, unknown>>).m ?? {}), ['layout']);
    },
  );
  t.test('regression: an increment of a counter that has outlived ttl_seconds starts from the delta, not from the expired value', async (t) => {
    // Bigtable's ReadModifyWrite added to the expired cell GC had not removed yet: +1 on a 41 set an
    // hour ago in a 60 s family read back 42, though reads hid the 41 (the LMDB store restarts at 1).
    const layout = `{name: "ttlc", keys_format: {encoding: "RAW"}, locality_groups: [
      {name: "short", in_memory: false, max_versions: 2147483647, ttl_seconds: 60, compression_type: "NONE",
       families: [{name: "c", columns: [{name: "hits", column_schema: {type: "COUNTER", storage: "FINAL"}}]}]},
      {name: "long", in_memory: false, max_versions: 2147483647, ttl_seconds: 2147483647, compression_type: "NONE",
       families: [{name: "d", columns: [{name: "hits", column_schema: {type: "COUNTER", storage: "FINAL"}}]}]}],
      version: "layout-1.0.0"}`;
    const store = await BigtableStore.open({ projectId: 'test', instanceId: 'ttlc', tablePrefix: 'tc' });
    t.teardown(() => store.close());
    await store.createInstance('i');
    await store.createTable('i', parseLayout(layout));
    const every: ReadSpec = { maxVersions: 1, minTimestamp: 0, maxTimestamp: Number.MAX_SAFE_INTEGER };
    const hourAgo = Date.now() - 3_600_000;
    const row = Buffer.from('r');
    await store.write('i', 'ttlc', [
      {
        rowKey: row,
        cells: [
          { kind: 'counter-set', family: 'c', qualifier: 'hits', value: 41n, timestamp: hourAgo },
          { kind: 'counter-set', family: 'd', qualifier: 'hits', value: 41n, timestamp: hourAgo },
        ],
      },
    ]);
    await store.write('i', 'ttlc', [
      {
        rowKey: row,
        cells: [
          { kind: 'counter-increment', family: 'c', qualifier: 'hits', delta: 1n },
          { kind: 'counter-increment', family: 'd', qualifier: 'hits', delta: 1n },
        ],
      },
    ]);
    const [got] = await store.get('i', 'ttlc', [row], every);
    const value = (family: string) => got!.cells.find((c) => c.family === family)?.json;
    t.equal(value('c'), '1', 'the expired 41 counts as absent: the increment starts from 1');
    t.equal(value('d'), '42', 'a family without a TTL keeps adding to its counter');
  });
}
