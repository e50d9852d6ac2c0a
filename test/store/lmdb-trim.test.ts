/**
 * Version trimming on write in the embedded store, checked on the stored keys themselves (reads
 * apply max_versions too, so a missing trim would not show through get). The store skips the trim
 * when it cannot remove anything: the row had no cell before the write and no column gets more
 * cells than its max_versions. These cases pin both sides of that rule.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { open } from 'lmdb';
import t from 'tap';
import { parseLayout } from '../../lib/model/layout.js';
import type { EncodedCell, RowWrite } from '../../lib/model/types.js';
import { parseCellTail, prefixEnd, rowPrefix } from '../../lib/store/lmdb/cell-key.js';
import { LmdbStore, moreCellsThanVersions } from '../../lib/store/lmdb/lmdb-store.js';
import { RAW_LAYOUT } from './conformance.js';

const dirs: string[] = [];
t.teardown(() => dirs.forEach((d) => rmSync(d, { recursive: true, force: true })));

const str = (family: string, qualifier: string, timestamp: number, value = `v${timestamp}`): EncodedCell => ({
  kind: 'value', family, qualifier, timestamp, schemaId: 0, json: JSON.stringify(value),
});
const key = (s: string): Buffer => Buffer.from(s, 'latin1');

/** A store with table raw (info, tags: max_versions 3; recent: 10), and a reader of its stored keys. */
async function fixture(): Promise<{ store: LmdbStore; write: (rows: RowWrite[]) => Promise<void>; stored: (row: string) => string[]; close: () => Promise<void> }> {
  const dir = mkdtempSync(join(tmpdir(), 'rowgate-trim-'));
  dirs.push(dir);
  const store = new LmdbStore({ path: dir, noSync: true });
  await store.createInstance('i');
  await store.createTable('i', parseLayout(RAW_LAYOUT));
  // The same environment as the store's (lmdb-js shares one per path and process).
  const env = open({ path: dir, noSubdir: false, maxDbs: 10_000, compression: false, noSync: true });
  const db = env.openDB<Buffer, Buffer>({ name: 'data/i/raw', keyEncoding: 'binary', encoding: 'binary' });
  return {
    store,
    write: (rows) => store.write('i', 'raw', rows),
    stored: (row) => {
      const prefix = rowPrefix(key(row));
      // In a write transaction: this handle's read snapshot would not see the store's later commits.
      return env.transactionSync(() => {
        const out: string[] = [];
        for (const k of db.getKeys({ start: prefix, end: prefixEnd(prefix) })) {
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
  // recent has max_versions 10: ten cells stay, the eleventh goes.
  await f.write([{ rowKey: key('c'), cells: Array.from({ length: 11 }, (_, i) => ({ kind: 'value', family: 'recent', qualifier: 'r', timestamp: i + 1, schemaId: 3, json: String(i) }) as EncodedCell) }]);
  t.equal(f.stored('c').length, 10);
  t.equal(f.stored('c').at(-1), 'recent:r@2');
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
  t.same(stored.filter((s) => s.startsWith('tags:q7@')), ['tags:q7@6', 'tags:q7@5', 'tags:q7@4']);
  await f.close();
});

t.test('moreCellsThanVersions counts cells per column of limited families', async (t) => {
  const layout = parseLayout(RAW_LAYOUT);
  const fam = layout.families;
  t.equal(moreCellsThanVersions([str('info', 'name', 1), str('info', 'age', 1), str('tags', 'name', 1), str('info', 'name', 2), str('info', 'name', 3)], fam), false);
  t.equal(moreCellsThanVersions([str('info', 'name', 1), str('info', 'name', 2), str('info', 'name', 3), str('info', 'name', 4)], fam), true);
  t.equal(moreCellsThanVersions([str('tags', 'a', 1), str('info', 'a', 2), str('tags', 'a', 3), str('info', 'a', 4), str('tags', 'a', 5)], fam), false, 'same qualifier, other family');
  const many = Array.from({ length: 40 }, (_, i) => str('tags', `q${i % 20}`, i));
  t.equal(moreCellsThanVersions(many, fam), false);
  t.equal(moreCellsThanVersions([...many, str('tags', 'q3', 99)], fam), false, 'q3: 3 cells');
  t.equal(moreCellsThanVersions([...many, str('tags', 'q3', 99), str('tags', 'q3', 98)], fam), true, 'q3: 4 cells');
  t.equal(moreCellsThanVersions([], fam), false);
});
