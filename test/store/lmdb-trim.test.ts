/**
 * Writes of the embedded store checked on what is stored itself (a compact row's versions, or a
 * spilled row's cell keys): version trimming, dropping cells past their TTL, counters past their
 * TTL, and writePacked (the import's packed batches) against write. Reads apply max_versions and
 * TTL too, so a missing trim would not show through get.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { open } from 'lmdb';
import t from 'tap';
import { parseLayout } from '../../lib/model/layout/layout.js';
import { FOREVER, type EncodedCell, type ReadSpec, type RowWrite } from '../../lib/model/types.js';
import { prefixEnd } from '../../lib/store/key-range.js';
import { parseCellTail, rowPrefix } from '../../lib/store/lmdb/cell-key.js';
import { decodeCompactRow, isCompact } from '../../lib/store/lmdb/compact-row.js';
import { LmdbStore } from '../../lib/store/lmdb/lmdb-store.js';
import { packRows } from '../../lib/store/lmdb/prepared-batch.js';
import { RAW_LAYOUT, str as stringCell } from './conformance.js';

const dirs: string[] = [];
t.teardown(() => dirs.forEach((d) => rmSync(d, { recursive: true, force: true })));

const str = (family: string, qualifier: string, timestamp: number, value = `v${timestamp}`): EncodedCell => stringCell(family, qualifier, value, timestamp);
const key = (s: string): Buffer => Buffer.from(s, 'latin1');

/**
 * A store with table raw (info, tags: max_versions 3; recent: 10) or the table of `layoutText`,
 * and a reader of its stored keys.
 */
async function fixture(
  layoutText = RAW_LAYOUT,
): Promise<{ store: LmdbStore; write: (rows: RowWrite[]) => Promise<void>; stored: (row: string) => string[]; close: () => Promise<void> }> {
  const dir = mkdtempSync(join(tmpdir(), 'rowgate-trim-'));
  dirs.push(dir);
  const store = new LmdbStore({ path: dir, noSync: true });
  await store.createInstance('i');
  const layout = parseLayout(layoutText);
  await store.createTable('i', layout);
  // The same environment as the store's (lmdb-js shares one per path and process).
  const env = open({ path: dir, noSubdir: false, maxDbs: 10_000, compression: false, noSync: true });
  const db = env.openDB<Buffer, Buffer>({ name: `data/i/${layout.name}`, keyEncoding: 'binary', encoding: 'binary' });
  return {
    store,
    write: (rows) => store.write('i', layout.name, rows),
    stored: (row) => {
      const prefix = rowPrefix(key(row));
      // In a write transaction: this handle's read snapshot would not see the store's later commits.
      return env.transactionSync(() => {
        const out: string[] = [];
        const entry = db.get(prefix);
        if (entry !== undefined && isCompact(entry)) {
          for (const c of decodeCompactRow(entry).cells()) out.push(`${c.family}:${c.qualifier}@${c.timestamp}`);
          return out;
        }
        for (const k of db.getKeys({ start: prefix, end: prefixEnd(prefix) })) {
          if (k.length === prefix.length) continue; // a spilled row's marker
          const tail = parseCellTail(k, prefix.length);
          out.push(`${tail.family}:${tail.qualifier}@${tail.timestamp}`);
        }
        return out;
      });
    },
    close: () => store.close(),
  };
}

t.test('a new row: columns with at most max_versions cells keep them all, a column with more is trimmed', async (t) => {
  const f = await fixture();
  await f.write([{ rowKey: key('a'), cells: [1, 2, 3].map((ts) => str('info', 'name', ts)).concat([4, 5].map((ts) => str('tags', 'x', ts))) }]);
  t.same(f.stored('a'), ['info:name@3', 'info:name@2', 'info:name@1', 'tags:x@5', 'tags:x@4']);
  await f.write([{ rowKey: key('b'), cells: [1, 2, 3, 4].map((ts) => str('info', 'name', ts)).concat([str('tags', 'x', 9)]) }]);
  t.same(f.stored('b'), ['info:name@4', 'info:name@3', 'info:name@2', 'tags:x@9'], 'four cells of a max_versions 3 column in a new row');
  // recent has max_versions 10: ten cells stay, the eleventh goes (timestamps within its 60 s TTL).
  const base = Date.now() - 10_000;
  await f.write([
    {
      rowKey: key('c'),
      cells: Array.from(
        { length: 11 },
        (_, i) => ({ kind: 'value', family: 'recent', qualifier: 'r', timestamp: base + i + 1, schemaId: 3, json: String(i) }) as EncodedCell,
      ),
    },
  ]);
  t.equal(f.stored('c').length, 10);
  t.equal(f.stored('c').at(-1), `recent:r@${base + 2}`);
  await f.close();
});

t.test('an existing row is trimmed even when this write alone stays within max_versions', async (t) => {
  const f = await fixture();
  await f.write([{ rowKey: key('a'), cells: [str('info', 'name', 1), str('info', 'name', 2)] }]);
  await f.write([{ rowKey: key('a'), cells: [str('info', 'name', 3), str('info', 'name', 4)] }]);
  t.same(f.stored('a'), ['info:name@4', 'info:name@3', 'info:name@2']);
  // The row exists through another column only: still trimmed.
  await f.write([{ rowKey: key('b'), cells: [str('tags', 'x', 1)] }]);
  await f.write([{ rowKey: key('b'), cells: [str('info', 'name', 7)] }]);
  await f.write([{ rowKey: key('b'), cells: [str('info', 'name', 5), str('info', 'name', 6), str('info', 'name', 8)] }]);
  t.same(f.stored('b'), ['info:name@8', 'info:name@7', 'info:name@6', 'tags:x@1']);
  await f.close();
});

t.test('the same row twice in one batch: the second sees the first (same transaction) and is trimmed', async (t) => {
  const f = await fixture();
  await f.write([
    { rowKey: key('a'), cells: [str('info', 'name', 1), str('info', 'name', 2)] },
    { rowKey: key('z'), cells: [str('info', 'name', 1)] },
    { rowKey: key('a'), cells: [str('info', 'name', 3), str('info', 'name', 4)] },
  ]);
  t.same(f.stored('a'), ['info:name@4', 'info:name@3', 'info:name@2']);
  t.same(f.stored('z'), ['info:name@1']);
  await f.close();
});

t.test('repeated timestamps and counters count as cells (an overestimate only costs a trim); big rows are counted per column', async (t) => {
  const f = await fixture();
  // Four cells, three distinct keys: all three stay.
  await f.write([{ rowKey: key('a'), cells: [str('info', 'name', 1), str('info', 'name', 2), str('info', 'name', 2, 'again'), str('info', 'name', 3)] }]);
  t.same(f.stored('a'), ['info:name@3', 'info:name@2', 'info:name@1']);
  // Counter increments on a new row update one cell.
  const incr: EncodedCell = { kind: 'counter-increment', family: 'info', qualifier: 'visits', delta: 1n };
  await f.write([{ rowKey: key('k'), cells: [incr, incr, incr, incr] }]);
  t.equal(f.stored('k').length, 1);
  // More than 32 cells: 20 map columns with 2 versions each stay, the 3 extra versions of one go.
  const cells: EncodedCell[] = [];
  for (let q = 0; q < 20; q++) cells.push(str('tags', `q${q}`, 1), str('tags', `q${q}`, 2));
  for (let ts = 3; ts <= 6; ts++) cells.push(str('tags', 'q7', ts));
  await f.write([{ rowKey: key('big'), cells }]);
  const stored = f.stored('big');
  t.equal(stored.length, 19 * 2 + 3);
  t.same(
    stored.filter((s) => s.startsWith('tags:q7@')),
    ['tags:q7@6', 'tags:q7@5', 'tags:q7@4'],
  );
  await f.close();
});

t.test('writePacked (a batch packed by packRows) stores exactly what write stores', async (t) => {
  const a = await fixture();
  const b = await fixture();
  const layout = parseLayout(RAW_LAYOUT);
  const rows: RowWrite[] = [
    {
      rowKey: key('r1'),
      cells: [str('info', 'name', 1), str('info', 'name', 2), { kind: 'value', family: 'info', qualifier: 'age', timestamp: 5, schemaId: 2, json: '41' }],
    },
    { rowKey: key('r\u00002'), cells: [str('tags', 'q\u0000z', 7, 'zero bytes in row key and qualifier'), str('tags', 'é', 8, 'ünïcode')] },
    { rowKey: key('r3'), cells: [1, 2, 3, 4, 5].map((ts) => str('info', 'name', ts)) },
    { rowKey: key('r1'), cells: [str('info', 'name', 3), str('info', 'name', 4)] },
    { rowKey: key('r4'), cells: [{ kind: 'counter-set', family: 'info', qualifier: 'visits', timestamp: 9, value: 2n ** 62n }] },
  ];
  await a.write(rows);
  const packed = packRows(rows, layout, 1024);
  t.ok(packed);
  await b.store.writePacked('i', 'raw', [packed!]);
  for (const row of ['r1', 'r\u00002', 'r3', 'r4']) t.same(b.stored(row), a.stored(row), `row ${JSON.stringify(row)}`);
  t.same(b.stored('r1'), ['info:age@5', 'info:name@4', 'info:name@3', 'info:name@2'], 'the second write of r1 in the batch was trimmed');
  const [got] = await b.store.get('i', 'raw', [key('r\u00002')], { maxVersions: FOREVER, minTimestamp: 0, maxTimestamp: Number.MAX_SAFE_INTEGER });
  t.same(
    got!.cells.map((c) => c.json),
    ['"zero bytes in row key and qualifier"', '"ünïcode"'],
  );
  await a.close();
  await b.close();
});

t.test('writePacked: cells without a timestamp get the write time, shared within a row', async (t) => {
  const f = await fixture();
  const before = Date.now();
  const packed = packRows(
    [
      {
        rowKey: key('s'),
        cells: [
          { kind: 'value', family: 'info', qualifier: 'name', schemaId: 0, json: '"n"' },
          { kind: 'value', family: 'info', qualifier: 'age', schemaId: 2, json: '1' },
        ],
      },
    ],
    parseLayout(RAW_LAYOUT),
    1024,
  );
  await f.store.writePacked('i', 'raw', [packed!]);
  const after = Date.now();
  const stamps = f.stored('s').map((s) => Number(s.split('@')[1]));
  t.equal(stamps.length, 2);
  t.equal(stamps[0], stamps[1]);
  t.ok(stamps[0]! >= before && stamps[0]! <= after, 'between the calls');
  await f.close();
});

t.test('packRows leaves to write what the format does not carry: increments, over-long keys', async (t) => {
  const layout = parseLayout(RAW_LAYOUT);
  const incr: EncodedCell = { kind: 'counter-increment', family: 'info', qualifier: 'visits', delta: 1n };
  t.equal(
    packRows(
      [
        { rowKey: key('a'), cells: [str('info', 'name', 1)] },
        { rowKey: key('b'), cells: [incr] },
      ],
      layout,
      1024,
    ),
    undefined,
  );
  t.equal(packRows([{ rowKey: key('a'), cells: [str('tags', 'x'.repeat(2000), 1)] }], layout, 1024), undefined);
  t.equal(packRows([{ rowKey: Buffer.alloc(1025, 1), cells: [str('info', 'name', 1)] }], layout, 1024), undefined);
  t.ok(packRows([{ rowKey: key('a'), cells: [str('info', 'name', 1)] }], layout, 1024));
});

/** Every group has a TTL of 60 s but `forever`: counters, a map family without and one with a version limit. */
const TTL_LAYOUT = `{
  name: "ttl",
  keys_format: {encoding: "RAW"},
  locality_groups: [
    {name: "short", in_memory: false, max_versions: 2147483647, ttl_seconds: 60, compression_type: "NONE",
     families: [
       {name: "c", columns: [{name: "hits", column_schema: {type: "COUNTER", storage: "FINAL"}}]},
       {name: "m", map_schema: {type: "INLINE", value: '"long"'}}]},
    {name: "capped", in_memory: false, max_versions: 2, ttl_seconds: 60, compression_type: "NONE",
     families: [{name: "v", map_schema: {type: "INLINE", value: '"long"'}}]},
    {name: "forever", in_memory: false, max_versions: 2147483647, ttl_seconds: 2147483647, compression_type: "NONE",
     families: [{name: "keep", map_schema: {type: "INLINE", value: '"long"'}}]}
  ],
  version: "layout-1.0.0"
}`;
const long = (family: string, qualifier: string, timestamp: number, value = 1): EncodedCell => ({
  kind: 'value',
  family,
  qualifier,
  timestamp,
  schemaId: 3,
  json: String(value),
});
const EVERY: ReadSpec = { maxVersions: FOREVER, minTimestamp: 0, maxTimestamp: Number.MAX_SAFE_INTEGER };
const HOUR = 3_600_000;

t.test('a counter whose newest value has outlived the TTL counts as absent: an increment restarts from the delta', async (t) => {
  const f = await fixture(TTL_LAYOUT);
  const now = Date.now();
  const incr = (delta: bigint): EncodedCell => ({ kind: 'counter-increment', family: 'c', qualifier: 'hits', delta });
  const hits = async (row: string): Promise<string[]> => (await f.store.get('i', 'ttl', [key(row)], EVERY))[0]!.cells.map((c) => c.json);
  await f.write([{ rowKey: key('old'), cells: [{ kind: 'counter-set', family: 'c', qualifier: 'hits', value: 41n, timestamp: now - HOUR }] }]);
  t.same(await hits('old'), [], 'the expired value is not read');
  await f.write([{ rowKey: key('old'), cells: [incr(1n)] }]);
  t.same(await hits('old'), ['1'], 'incremented from nothing, not 41 + 1');
  t.equal(f.stored('old').length, 1, 'the expired cell was dropped by the trim');
  await f.write([{ rowKey: key('old'), cells: [incr(2n)] }]);
  t.same(await hits('old'), ['3']);
  // A live value is incremented as before, in place when set in the future.
  await f.write([{ rowKey: key('live'), cells: [{ kind: 'counter-set', family: 'c', qualifier: 'hits', value: 41n, timestamp: now - 1000 }] }]);
  await f.write([{ rowKey: key('live'), cells: [incr(1n)] }]);
  t.same(await hits('live'), ['42']);
  await f.write([{ rowKey: key('future'), cells: [{ kind: 'counter-set', family: 'c', qualifier: 'hits', value: 5n, timestamp: now + HOUR }] }]);
  await f.write([{ rowKey: key('future'), cells: [incr(1n)] }]);
  t.same(await hits('future'), ['6']);
  t.same(f.stored('future'), [`c:hits@${now + HOUR}`]);
  await f.close();
});

for (const path of ['write', 'writePacked'] as const) {
  t.test(`${path}: a write drops the row's cells older than the TTL, in every family with one, and versions beyond max_versions`, async (t) => {
    const f = await fixture(TTL_LAYOUT);
    const layout = parseLayout(TTL_LAYOUT);
    const write = async (rows: RowWrite[]): Promise<void> => {
      if (path === 'write') return f.write(rows);
      const packed = packRows(rows, layout, 1024);
      t.ok(packed, 'packed');
      return f.store.writePacked('i', 'ttl', [packed!]);
    };
    const now = Date.now();
    // Cells written already expired are dropped at once, a new row's too.
    await write([{ rowKey: key('r'), cells: [long('m', 'a', now - HOUR), long('m', 'b', now - 1000), long('v', 'x', now - 2 * HOUR), long('keep', 'k', 1)] }]);
    t.same(f.stored('r'), ['keep:k@1', `m:b@${now - 1000}`], 'expired cells of m and v dropped; keep has no TTL');
    await write([{ rowKey: key('r'), cells: [long('m', 'c', now)] }]);
    t.same(f.stored('r'), ['keep:k@1', `m:b@${now - 1000}`, `m:c@${now}`]);
    // Versions beyond max_versions and expired ones go together.
    await write([{ rowKey: key('r'), cells: [long('v', 'y', now - 3), long('v', 'y', now - 2), long('v', 'y', now - 1), long('v', 'y', now - HOUR)] }]);
    t.same(
      f.stored('r').filter((k) => k.startsWith('v:')),
      [`v:y@${now - 1}`, `v:y@${now - 2}`],
    );
    const [row] = await f.store.get('i', 'ttl', [key('r')], EVERY);
    t.same(
      row!.cells.map((c) => `${c.family}:${c.qualifier}@${c.timestamp}`),
      f.stored('r'),
      'what is stored is what is read',
    );
    await f.close();
  });
}
