/**
 * Wide rows on the embedded store: a row whose compact encoding passes MAX_COMPACT_ROW_BYTES is
 * spilled to cell entries, and from then on a write adds cell entries instead of rewriting a large
 * value; reads, counters, trims and deletes of a spilled row answer as for any row.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { open } from 'lmdb';
import t, { type Test } from 'tap';
import { parseLayout } from '../../lib/model/layout/layout.js';
import { FOREVER, type EncodedCell, type ReadSpec } from '../../lib/model/types.js';
import { prefixEnd } from '../../lib/store/key-range.js';
import { rowPrefix } from '../../lib/store/lmdb/cell-key.js';
import { isCompact, MAX_COMPACT_ROW_BYTES, TAG_SPILLED } from '../../lib/store/lmdb/compact-row.js';
import { lmdbEnvOptions } from '../../lib/store/lmdb/env-options.js';
import { LmdbStore } from '../../lib/store/lmdb/lmdb-store.js';
import { RAW_LAYOUT } from './conformance.js';

const EVERY: ReadSpec = { maxVersions: FOREVER, minTimestamp: 0, maxTimestamp: Number.MAX_SAFE_INTEGER };
type ValueCell = Extract<EncodedCell, { kind: 'value' }>;
const tag = (q: string, ts: number, value = `value of ${q} at ${ts}`): ValueCell => ({
  kind: 'value',
  family: 'tags',
  qualifier: q,
  timestamp: ts,
  schemaId: 0,
  json: JSON.stringify(value),
});

async function fixture(t: Test) {
  const dir = mkdtempSync(join(tmpdir(), 'rowgate-spill-'));
  const store = new LmdbStore({ path: dir, noSync: true, scanThreads: 0 });
  t.teardown(async () => {
    await store.close();
    rmSync(dir, { recursive: true, force: true });
  });
  await store.createInstance('i');
  await store.createTable('i', parseLayout(RAW_LAYOUT));
  const env = open(lmdbEnvOptions(dir, true));
  const db = env.openDB<Buffer, Buffer>({ name: 'data/i/raw', keyEncoding: 'binary', encoding: 'binary' });
  /** The row's entries as stored: the row entry's form and the number of cell entries. */
  const stored = (row: string): { form: 'compact' | 'spilled' | 'none'; bytes: number; cells: number } =>
    env.transactionSync(() => {
      const prefix = rowPrefix(Buffer.from(row));
      const entry = db.get(prefix);
      let cells = 0;
      for (const key of db.getKeys({ start: prefix, end: prefixEnd(prefix) }) as Iterable<Buffer>) if (key.length > prefix.length) cells++;
      const form = entry === undefined ? 'none' : isCompact(entry) ? 'compact' : entry[0] === TAG_SPILLED ? 'spilled' : 'none';
      return { form, bytes: entry?.length ?? 0, cells };
    });
  const read = async (row: string, spec: ReadSpec = EVERY) =>
    (await store.get('i', 'raw', [Buffer.from(row)], spec))[0]!.cells.map((c) => `${c.family}:${c.qualifier}@${c.timestamp}=${c.json}`);
  return { store, stored, read };
}

t.test('a row grows compact until its encoding passes the bound, then is spilled; later writes add cell entries', async (t) => {
  const f = await fixture(t);
  const expected = new Map<string, string>();
  let spilledAt = -1;
  for (let batch = 0; batch < 40; batch++) {
    const cells = Array.from({ length: 25 }, (_, i) => tag(`q${String(batch * 25 + i).padStart(5, '0')}`, 1000 + batch));
    await f.store.write('i', 'raw', [{ rowKey: Buffer.from('wide'), cells }]);
    for (const c of cells) expected.set(`${c.family}:${c.qualifier}`, `${c.family}:${c.qualifier}@${c.timestamp}=${c.json}`);
    const s = f.stored('wide');
    if (s.form === 'compact') {
      t.ok(s.bytes <= MAX_COMPACT_ROW_BYTES && s.cells === 0, `batch ${batch}: compact, ${s.bytes} bytes`);
    } else {
      if (spilledAt < 0) spilledAt = batch;
      t.equal(s.form, 'spilled', `batch ${batch}: spilled`);
      t.equal(s.cells, expected.size, `batch ${batch}: one cell entry per cell`);
    }
  }
  t.ok(spilledAt > 0 && spilledAt < 40, `spilled at batch ${spilledAt}, once over ${MAX_COMPACT_ROW_BYTES} bytes`);
  t.same(await f.read('wide'), [...expected.values()].sort(), 'every cell reads back');

  // One more cell: one more entry, the marker untouched (no rewrite of the row).
  const before = f.stored('wide');
  await f.store.write('i', 'raw', [{ rowKey: Buffer.from('wide'), cells: [tag('q00003', 5000)] }]);
  const after = f.stored('wide');
  t.same(after, { ...before, cells: before.cells + 1 }, 'a write to a spilled row puts one cell entry');
  t.same(await f.read('wide', { ...EVERY, columns: [{ family: 'tags', qualifier: 'q00003' }] }), [
    `tags:q00003@5000="value of q00003 at 5000"`,
    `tags:q00003@1000="value of q00003 at 1000"`,
  ]);

  // max_versions (3) is kept by the cell trim: two more versions of q00003 leave three.
  await f.store.write('i', 'raw', [{ rowKey: Buffer.from('wide'), cells: [tag('q00003', 6000), tag('q00003', 7000)] }]);
  t.same(
    (await f.read('wide', { ...EVERY, columns: [{ family: 'tags', qualifier: 'q00003' }] })).map((c) => c.split('=')[0]),
    ['tags:q00003@7000', 'tags:q00003@6000', 'tags:q00003@5000'],
  );
  t.equal(f.stored('wide').cells, before.cells + 2, 'the oldest version was trimmed away');

  // Counters on a spilled row.
  const incr: EncodedCell = { kind: 'counter-increment', family: 'info', qualifier: 'visits', delta: 5n };
  await f.store.write('i', 'raw', [{ rowKey: Buffer.from('wide'), cells: [incr, incr] }]);
  t.match((await f.read('wide', { ...EVERY, columns: [{ family: 'info', qualifier: 'visits' }] }))[0], /=10$/, 'two increments of 5');

  // Deletes: one column, then the whole row (marker included).
  const cellsBefore = f.stored('wide').cells;
  await f.store.delete('i', 'raw', [{ rowKey: Buffer.from('wide'), family: 'tags', qualifier: 'q00003' }]);
  t.equal(f.stored('wide').cells, cellsBefore - 3, "the column's three versions are gone");
  await f.store.delete('i', 'raw', [{ rowKey: Buffer.from('wide') }]);
  t.same(f.stored('wide'), { form: 'none', bytes: 0, cells: 0 }, 'nothing of the row is left');
  t.same(await f.read('wide'), []);
});

t.test('a spilled row whose last cell is deleted leaves no marker; a scan passes spilled and compact rows in key order', async (t) => {
  const f = await fixture(t);
  const big = Array.from({ length: 400 }, (_, i) => tag(`k${i}`, 1));
  await f.store.write('i', 'raw', [
    { rowKey: Buffer.from('b'), cells: big },
    { rowKey: Buffer.from('a'), cells: [tag('x', 1)] },
    { rowKey: Buffer.from('c'), cells: [tag('y', 1)] },
  ]);
  t.equal(f.stored('b').form, 'spilled');
  t.equal(f.stored('a').form, 'compact');
  const rows: string[] = [];
  for await (const batch of f.store.scan('i', 'raw', { limit: -1, read: EVERY })) for (const r of batch) rows.push(`${r.rowKey.toString()}:${r.cells.length}`);
  t.same(rows, ['a:1', 'b:400', 'c:1']);
  await f.store.delete('i', 'raw', [{ rowKey: Buffer.from('b'), family: 'tags' }]);
  t.same(f.stored('b'), { form: 'none', bytes: 0, cells: 0 }, 'the family was the whole row: the marker went with it');
});
