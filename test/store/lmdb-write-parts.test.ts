/**
 * LmdbStore.writePacked, how `rowgate import` writes a batch parsed in parts: the parts' sorted runs
 * merged into one key order (mergedRows) and appended at the table's end while the keys stay above
 * the table's. Whatever the table held before, the parts' order, repeated rows and rows that do not
 * append, the table ends as writing every row with write() in input order leaves it; and into an
 * empty table the rows were really appended (LMDB's leaf pages come out full).
 */
import { open } from 'lmdb';
import t, { type Test } from 'tap';
import { parseLayout } from '../../lib/model/layout/layout.js';
import type { RowWrite } from '../../lib/model/types.js';
import { decodeCompactRow } from '../../lib/store/lmdb/compact-row.js';
import type { LmdbStore } from '../../lib/store/lmdb/lmdb-store.js';
import { mergedRows, packRows, type PreparedBatch } from '../../lib/store/lmdb/prepared-batch.js';
import { RAW_LAYOUT } from './conformance.js';
import { openStoreWithTable } from './lmdb-fixtures.js';

const layout = parseLayout(RAW_LAYOUT);

let seed = 11;
const random = (): number => (seed = (seed * 1103515245 + 12345) % 2147483648) / 2147483648;

/** A row of key `k` whose cells say which input line wrote them (timestamps repeat: a later line replaces a cell). */
function row(k: number, line: number): RowWrite {
  return {
    rowKey: Buffer.from(`row-${String(k).padStart(6, '0')}`),
    cells: [
      { kind: 'value', family: 'info', qualifier: 'name', timestamp: 1 + (line % 3), schemaId: 0, json: JSON.stringify(`line ${line}`) },
      { kind: 'value', family: 'info', qualifier: 'age', timestamp: 7, schemaId: 2, json: String(line % 100) },
      { kind: 'value', family: 'tags', qualifier: `t${line % 4}`, timestamp: 3, schemaId: 0, json: '"x"' },
    ],
  };
}

const openStore = (t: Test): Promise<{ store: LmdbStore; dir: string }> => openStoreWithTable(t, layout, { scanThreads: 0 });

/** Every entry of the table, as hex key = hex value (the whole stored state, compared byte for byte). */
function entries(dir: string): string[] {
  const env = open({ path: dir, readOnly: true, maxDbs: 10_000 });
  try {
    const db = env.openDB<Buffer, Buffer>({ name: 'data/i/raw', keyEncoding: 'binary', encoding: 'binary' });
    return [...db.getRange({})].map(({ key, value }) => `${key.toString('hex')}=${value.toString('hex')}`);
  } finally {
    void env.close();
  }
}

/** Every row's cells; of a counter, its value alone (its versions' timestamps are the times of its increments). */
function cells(dir: string): string[] {
  const env = open({ path: dir, readOnly: true, maxDbs: 10_000 });
  try {
    const db = env.openDB<Buffer, Buffer>({ name: 'data/i/raw', keyEncoding: 'binary', encoding: 'binary' });
    const out: string[] = [];
    for (const { key, value } of db.getRange({})) {
      const model = decodeCompactRow(Buffer.from(value));
      for (const c of model.columns) {
        // A counter keeps one version per millisecond its increments fell in: only its value is compared.
        const versions = c.versions[0]!.counter ? c.versions.slice(0, 1) : c.versions;
        for (const v of versions) out.push(`${key.toString('latin1')} ${c.family}:${c.qualifier}@${v.counter ? 'now' : v.timestamp} ${v.json}`);
      }
    }
    return out;
  } finally {
    void env.close();
  }
}

function leafPages(dir: string): number {
  const env = open({ path: dir, readOnly: true, maxDbs: 10_000 });
  try {
    const db = env.openDB<Buffer, Buffer>({ name: 'data/i/raw', keyEncoding: 'binary', encoding: 'binary' });
    return (db.getStats() as { treeLeafPageCount: number }).treeLeafPageCount;
  } finally {
    void env.close();
  }
}

/** Input lines cut into parts of `partRows`, each packed and sorted as a parsing thread hands it over. */
function parts(lines: RowWrite[], partRows: number): PreparedBatch[] {
  const out: PreparedBatch[] = [];
  for (let p = 0; p < lines.length; p += partRows) out.push(packRows(lines.slice(p, p + partRows), layout, Infinity)!);
  return out;
}

t.test('mergedRows: one key order across runs; rows of one key in run order, then in packed order', async (t) => {
  const lines: RowWrite[] = [];
  for (let line = 0; line < 3000; line++) lines.push(row(Math.floor(random() * 800), line));
  const runs = parts(lines, 256);
  const merged = [...mergedRows(runs)].map(({ prefix, encoded }) => ({ key: Buffer.from(prefix), line: JSON.parse(encodedName(encoded)) as string }));
  // A part packs the lines of one key as one row (BatchPacker.finish merges them): its newest
  // name is the line of the latest timestamp, the later line of equal ones.
  const perPart = new Map<string, { key: Buffer; line: string; order: number; ts: number }>();
  lines.forEach((r, line) => {
    const key = Buffer.from(r.rowKey.toString('latin1') + '\0\0', 'latin1');
    const id = `${Math.floor(line / 256)} ${key.toString('hex')}`;
    const ts = 1 + (line % 3);
    const held = perPart.get(id);
    if (held === undefined || ts >= held.ts) perPart.set(id, { key, line: `line ${line}`, order: held?.order ?? line, ts });
  });
  const expected = [...perPart.values()].sort((a, b) => Buffer.compare(a.key, b.key) || a.order - b.order);
  t.equal(merged.length, perPart.size);
  t.same(
    merged.map((m) => `${m.key.toString('hex')} ${m.line}`),
    expected.map((e) => `${e.key.toString('hex')} ${e.line}`),
  );
  t.same([...mergedRows([])], [], 'no runs: no rows');
});

/** The name cell's JSON of a one-row compact encoding (its newest name version is the one written). */
function encodedName(encoded: Buffer): string {
  return decodeCompactRow(encoded).column('info', 'name')!.versions[0]!.json;
}

for (const before of ['empty', 'rows below', 'rows among', 'rows above'] as const) {
  t.test(`into a table with ${before}: the table ends as write() of every row in input order leaves it`, async (t) => {
    const reference = await openStore(t);
    const tested = await openStore(t);
    const earlier: RowWrite[] = [];
    const span = before === 'rows below' ? [0, 500] : before === 'rows above' ? [5000, 5500] : before === 'rows among' ? [0, 5000] : [0, 0];
    for (let k = span[0]!; k < span[1]!; k += before === 'rows among' ? 7 : 1) earlier.push(row(k, 100_000 + k));
    if (earlier.length > 0) for (const s of [reference, tested]) await s.store.write('i', 'raw', earlier);
    const lines: RowWrite[] = [];
    for (let line = 0; line < 4000; line++) lines.push(row(1000 + Math.floor(random() * 3000), line));
    for (let p = 0; p < lines.length; p += 500) await reference.store.write('i', 'raw', lines.slice(p, p + 500));
    await tested.store.writePacked('i', 'raw', parts(lines, 700));
    t.same(entries(tested.dir), entries(reference.dir), 'every entry the same');
  });
}

t.test('into an empty table the rows are appended: full leaf pages, fewer than random puts leave', async (t) => {
  const appended = await openStore(t);
  const scattered = await openStore(t);
  const lines: RowWrite[] = [];
  for (let line = 0; line < 20_000; line++) lines.push(row(line, line));
  for (let i = lines.length - 1; i > 0; i--) {
    const j = Math.floor(random() * (i + 1));
    [lines[i], lines[j]] = [lines[j]!, lines[i]!];
  }
  await appended.store.writePacked('i', 'raw', parts(lines, 2000));
  for (let p = 0; p < lines.length; p += 2000) await scattered.store.write('i', 'raw', lines.slice(p, p + 2000));
  t.same(entries(appended.dir), entries(scattered.dir), 'the same entries');
  const [a, s] = [leafPages(appended.dir), leafPages(scattered.dir)];
  t.ok(a * 1.3 < s, `appended: ${a} leaf pages, random puts: ${s}`);
});

t.test('parts with rows the packed format does not carry are written in order, in one transaction', async (t) => {
  const reference = await openStore(t);
  const tested = await openStore(t);
  const lines: RowWrite[] = [];
  for (let line = 0; line < 600; line++) lines.push(row(Math.floor(random() * 200), line));
  const increments: RowWrite[] = lines
    .slice(200, 400)
    .map((r) => ({ rowKey: r.rowKey, cells: [{ kind: 'counter-increment', family: 'info', qualifier: 'visits', delta: 2n }] }));
  const all = [...lines.slice(0, 200), ...increments, ...lines.slice(400)];
  await reference.store.write('i', 'raw', all);
  await tested.store.writePacked('i', 'raw', [packRows(lines.slice(0, 200), layout, Infinity)!, increments, packRows(lines.slice(400), layout, Infinity)!]);
  t.same(cells(tested.dir), cells(reference.dir), 'every cell the same');
  const overflow: RowWrite[] = [
    { rowKey: Buffer.from('row-000001'), cells: [{ kind: 'counter-increment', family: 'info', qualifier: 'visits', delta: 2n ** 63n - 1n }] },
  ];
  const before = entries(tested.dir);
  await t.rejects(tested.store.writePacked('i', 'raw', [packRows([row(999_999, 1)], layout, Infinity)!, overflow, overflow]), { code: 'RG_ERR_BAD_COUNTER' });
  t.same(entries(tested.dir), before, 'an overflow rolls back the whole batch, its packed part too');
});

t.test('a batch marker moves with its batch, and a batch that finds it elsewhere writes nothing, packed or not', async (t) => {
  const { store, dir } = await openStore(t);
  const packed = (k: number): PreparedBatch => packRows([row(k, k)], layout, Infinity)!;
  const objects = (k: number): RowWrite[] => [
    { rowKey: row(k, k).rowKey, cells: [{ kind: 'counter-increment', family: 'info', qualifier: 'visits', delta: 1n }] },
  ];
  await store.writePacked('i', 'raw', [packed(1)], { key: 'm', expected: undefined, value: 'after 1' });
  t.equal(await store.batchMarker('m'), 'after 1', 'the first batch set the marker');
  await store.writePacked('i', 'raw', [packed(2), objects(2)], { key: 'm', expected: 'after 1', value: 'after 2' });
  t.equal(await store.batchMarker('m'), 'after 2', 'a batch with row objects moved it too');
  const before = entries(dir);
  for (const parts of [[packed(3)], [packed(3), objects(3)]]) {
    await t.rejects(store.writePacked('i', 'raw', parts, { key: 'm', expected: 'after 1', value: 'after 3' }), { code: 'RG_ERR_STORE_UNAVAILABLE' });
    t.equal(await store.batchMarker('m'), 'after 2', `a stale batch (${parts.length} part(s)) left the marker`);
  }
  t.same(entries(dir), before, 'and wrote none of its rows');
  await store.clearBatchMarker('m');
  t.equal(await store.batchMarker('m'), undefined, 'cleared');
});
