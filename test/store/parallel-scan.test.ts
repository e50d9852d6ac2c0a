// Large LMDB scans rendered on worker threads (scan-pool.ts) send exactly the bytes of the
// single-thread scan, in row order, for every revision, selection and bound, at many part sizes;
// the read-ahead stays bounded and an abandoned scan releases everything.
import t from 'tap';
import { mkdtempSync, rmSync, truncateSync } from 'node:fs';
import { availableParallelism, tmpdir } from 'node:os';
import { join } from 'node:path';
import { open } from 'lmdb';
import { rowRenderSpec } from '../../lib/rows/row-format.js';
import { arrowBatchSpec } from '../../lib/rows/stages/arrow.js';
import { parseLayout } from '../../lib/model/layout/layout.js';
import { encodeRowKey } from '../../lib/model/keys/row-key.js';
import { parseReadSpec } from '../../lib/model/read/read-request.js';
import type { RowWrite } from '../../lib/model/types.js';
import { rowKeyEnd } from '../../lib/store/lmdb/cell-key.js';
import { LmdbStore } from '../../lib/store/lmdb/lmdb-store.js';
import { splitRange } from '../../lib/store/lmdb/range-split.js';
import { PARALLEL_MIN_BYTES, ScanPool, scanThreadsStartedEarly, startScanThreadEarly } from '../../lib/store/lmdb/scan-pool.js';
import type { ChunkSpec, ScanRequest } from '../../lib/store/store.js';
import { SAMPLE_LAYOUT } from '../http/harness.js';
import { chunkScanBytes, openSampleStore, openStoreWithTable, renderedScan, sampleRows, serializedScan } from './lmdb-fixtures.js';

const ROWS = 3000;

// One store and pool for the file: a scan worker's first start compiles its TypeScript under the
// test runner (~7 s here), so every test sharing the workers keeps the file fast.
const { store, layout } = await openSampleStore(t, { scanThreads: 2, parallelScan: { minBytes: 0, partBytes: 8 * 1024 } });
await store.write('i', 'sample_table', sampleRows(layout, ROWS));
t.afterEach(() => {
  store.parallelScan.partBytes = 8 * 1024;
});

const expectedText = (request: ScanRequest, revision: 1 | 2 | 3): Promise<string> => serializedScan(store, 'i', 'sample_table', request, layout, revision);

t.test('a parallel scan sends the single-thread bytes, in row order, for every revision, selection and bound', async (t) => {
  const before = store.scanPool!.partsSubmitted;
  const reads = [{}, { versions: '2' }, { versions: 'all', timerange: '105..125' }, { cols: 'strings,group_family:counter' }, { cols: 'longs:n5,longs:n10' }];
  const bounds = [{}, { start: encodeRowKey(layout.keyFormat, [17]) }, { end: encodeRowKey(layout.keyFormat, [2500]) }];
  for (const revision of [1, 2, 3] as const) {
    for (const q of reads) {
      // Bounds do not depend on the revision's row form: checked once, under revision 3.
      for (const b of revision === 3 ? bounds : bounds.slice(0, 1)) {
        const request: ScanRequest = { ...b, limit: -1, read: parseReadSpec(layout, q) };
        const expected = await expectedText(request, revision);
        const { text, rows } = await renderedScan(store, 'i', 'sample_table', request, revision);
        const what = `revision ${revision} ${JSON.stringify(q)} ${Object.keys(b).join(',') || 'whole table'}`;
        t.equal(text, expected, what);
        t.equal(rows, expected.split('\r\n').length - 1, `${what}: row count`);
      }
    }
  }
  t.ok(store.scanPool!.partsSubmitted - before > 25 * 10, 'the scans really ran on the pool, in many parts');
  t.equal(store.openScans, 0, 'every scan closed');
});

for (const partBytes of [4096, 20_000, 100_000, 1 << 20]) {
  t.test(`parts of ${partBytes} stored bytes: the same bytes as one thread`, async (t) => {
    store.parallelScan.partBytes = partBytes;
    const request: ScanRequest = { limit: -1, read: parseReadSpec(layout, { versions: 'all' }) };
    const expected = await expectedText(request, 3);
    t.equal((await renderedScan(store, 'i', 'sample_table', request, 3)).text, expected);
  });
}

t.test('a client that stops reading stops the workers: read-ahead is bounded, and return() releases the scan', async (t) => {
  store.parallelScan.partBytes = 4096;
  const pool = store.scanPool!;
  const request: ScanRequest = { limit: -1, read: parseReadSpec(layout, {}) };
  const scan = store.scanChunks('i', 'sample_table', request, rowRenderSpec(3));
  const before = pool.partsSubmitted;
  const first = await scan.next();
  t.notOk(first.done, 'a first chunk');
  await new Promise((r) => setTimeout(r, 300));
  const submitted = pool.partsSubmitted - before;
  t.ok(submitted <= pool.threads * 2, `${submitted} parts submitted while the consumer waits (at most ${pool.threads * 2})`);
  t.equal(store.openScans, 1);
  await scan.return();
  t.equal(store.openScans, 0, 'return() releases the scan');
  const deadline = Date.now() + 5000;
  while (pool.busy > 0 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 10));
  t.equal(pool.busy, 0, 'the workers finished what they had');
  t.ok(pool.partsSubmitted - before <= pool.threads * 2, 'and nothing more was submitted');
  t.same(await scan.next(), { done: true, value: undefined }, 'the scan stays finished');
});

t.test("an Arrow spec's aheadParts sets how many parts each thread renders ahead of the reader", async (t) => {
  store.parallelScan.partBytes = 4096;
  const pool = store.scanPool!;
  const request: ScanRequest = { limit: -1, read: parseReadSpec(layout, {}) };
  const submittedWhileWaiting = async (aheadParts: number | undefined): Promise<number> => {
    const before = pool.partsSubmitted;
    const scan = store.scanChunks('i', 'sample_table', request, arrowBatchSpec(-1, { aheadParts }));
    t.notOk((await scan.next()).done, 'a first chunk');
    await new Promise((r) => setTimeout(r, 300));
    const submitted = pool.partsSubmitted - before;
    await scan.return();
    return submitted;
  };
  t.equal(await submittedWhileWaiting(undefined), pool.threads * 2, 'two parts a thread by default');
  t.equal(await submittedWhileWaiting(4), pool.threads * 4, 'four when the spec asks for four');
  const deadline = Date.now() + 5000;
  while (pool.busy > 0 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 10));
  t.equal(pool.busy, 0);
});

t.test('a scan starts its threads when it is made, before its first read', async (t) => {
  const pool = store.scanPool!;
  const before = pool.partsSubmitted;
  const scan = store.scanChunks('i', 'sample_table', { limit: -1, read: parseReadSpec(layout, {}) }, rowRenderSpec(3));
  t.equal(pool.partsSubmitted - before, pool.threads * 2, 'two parts a thread submitted at once');
  t.notOk((await scan.next()).done, 'and read as usual');
  await scan.return();
  t.equal(store.openScans, 0);
});

t.test("an Arrow spec's threads caps the scan threads it uses: the same bytes from fewer threads", async (t) => {
  // A store of its own: its pool has started no thread yet.
  const fresh = await openSampleStore(t, { scanThreads: 2, parallelScan: { minBytes: 0, partBytes: 8 * 1024 } });
  await fresh.store.write('i', 'sample_table', sampleRows(fresh.layout, ROWS));
  const pool = fresh.store.scanPool!;
  const request: ScanRequest = { limit: -1, read: parseReadSpec(fresh.layout, {}) };
  const bytesOf = (threads: number | undefined): Promise<Buffer> => chunkScanBytes(fresh.store, 'i', 'sample_table', request, arrowBatchSpec(-1, { threads }));
  const before = pool.partsSubmitted;
  const one = await bytesOf(1);
  t.ok(pool.partsSubmitted - before > 10, 'the scan ran on the pool, in many parts');
  t.equal(pool.started, 1, 'on one thread');
  const both = await bytesOf(undefined);
  t.equal(pool.started, 2, 'the next scan, without a cap, on both');
  t.ok(one.equals(both), 'the same bytes');
  t.ok((await bytesOf(8)).equals(both), 'a cap above the pool uses the pool');
  t.equal(pool.started, 2);
});

const oneCore = availableParallelism() < 2 && 'one core: no thread is started early';
t.test('a thread started early is taken by the first pool that needs one, which names its store', { skip: oneCore }, async (t) => {
  const fresh = { layout, ...(await openStoreWithTable(t, layout, { scanThreads: 2, parallelScan: { minBytes: 0, partBytes: 8 * 1024 } })) };
  await fresh.store.write('i', 'sample_table', sampleRows(fresh.layout, ROWS));
  startScanThreadEarly(fresh.dir, 2);
  t.equal(scanThreadsStartedEarly(), 0, 'none for a store whose data file is below the parallel scan size');
  // Big enough: the data file grows in whole pages, as a table of that size would make it.
  truncateSync(join(fresh.dir, 'data.mdb'), PARALLEL_MIN_BYTES);
  startScanThreadEarly(fresh.dir, 1);
  t.equal(scanThreadsStartedEarly(), 0, 'none for a store without a pool');
  startScanThreadEarly(fresh.dir, 2, 'arrow');
  t.equal(scanThreadsStartedEarly(), 1, 'one thread waiting, loading the Arrow encoder');
  const request: ScanRequest = { limit: -1, read: parseReadSpec(fresh.layout, {}) };
  t.equal(scanThreadsStartedEarly(), 1, 'still waiting: no scan yet');
  const arrowOf = (): Promise<Buffer> => chunkScanBytes(fresh.store, 'i', 'sample_table', request, arrowBatchSpec(-1));
  const first = await arrowOf();
  t.equal(scanThreadsStartedEarly(), 0, 'taken');
  t.equal(fresh.store.scanPool!.started, 2);
  t.ok(first.length > 0 && first.equals(await arrowOf()), 'the same Arrow batches as a scan of warm threads');
  const { text } = await renderedScan(fresh.store, 'i', 'sample_table', request, 3);
  t.equal(text, await serializedScan(fresh.store, 'i', 'sample_table', request, fresh.layout, 3), 'and row documents: the single-thread bytes');
});

t.test('a scan with a limit, or a small table, stays on the calling thread', async (t) => {
  const before = store.scanPool!.partsSubmitted;
  let rows = 0;
  for await (const c of store.scanChunks('i', 'sample_table', { limit: 500, read: parseReadSpec(layout, {}) }, rowRenderSpec(3))) rows += c.rows;
  t.equal(rows, 500);
  t.equal(store.scanPool!.partsSubmitted, before, 'no part went to the pool');
  const { store: small } = await openSampleStore(t, { scanThreads: 2 });
  await small.write('i', 'sample_table', sampleRows(layout, 100));
  for await (const c of small.scanChunks('i', 'sample_table', { limit: -1, read: parseReadSpec(layout, {}) }, rowRenderSpec(3))) rows += c.rows;
  t.equal(small.scanPool!.partsSubmitted, 0, 'a table below the size threshold is scanned on the calling thread');
});

t.test('scanThreads 0 or 1 means no pool', async (t) => {
  for (const scanThreads of [0, 1]) {
    const noPoolDir = mkdtempSync(join(tmpdir(), 'rowgate-parallel-'));
    const s = new LmdbStore({ path: noPoolDir, noSync: true, scanThreads });
    t.equal(s.scanPool, undefined, `scanThreads ${scanThreads}`);
    await s.close();
    rmSync(noPoolDir, { recursive: true, force: true });
  }
});

t.test('splitRange: contiguous ranges of whole rows that cover every key once, even for skewed keys', async (t) => {
  const splitDir = mkdtempSync(join(tmpdir(), 'rowgate-split-'));
  const env = open({ path: splitDir, noSubdir: false, maxDbs: 10, compression: false, noSync: true });
  t.teardown(async () => {
    await env.close();
    rmSync(splitDir, { recursive: true, force: true });
  });
  const db = env.openDB<Buffer, Buffer>({ name: 'd', keyEncoding: 'binary', encoding: 'binary' });
  // Row prefixes are escaped row keys ended by 00 00; skewed: a long shared prefix, dense tail.
  const rowKeys: Buffer[] = [];
  for (let i = 0; i < 500; i++)
    rowKeys.push(Buffer.concat([Buffer.from('tenant-0000000000-'), Buffer.from(String(i * i).padStart(9, '0')), Buffer.from([0, 0])]));
  for (let i = 0; i < 50; i++) rowKeys.push(Buffer.concat([Buffer.from([0xfe, i + 1]), Buffer.from([0, 0])]));
  await db.transaction(() => {
    for (const rk of rowKeys) for (const c of ['a', 'b', 'c']) db.putSync(Buffer.concat([rk, Buffer.from(c)]), Buffer.from('v'));
  });
  const all = [...db.getKeys({})].map((k) => Buffer.from(k as Buffer).toString('hex'));
  for (const [start, end, parts] of [
    [undefined, undefined, 2],
    [undefined, undefined, 16],
    [undefined, undefined, 400],
    [Buffer.from('tenant-0000000000-000001'), Buffer.from([0xfe, 20]), 7],
    [Buffer.from('zz'), undefined, 4],
  ] as const) {
    const ranges = splitRange(db, start, end, parts);
    t.ok(ranges.length >= 1 && ranges.length <= parts, `${ranges.length} ranges for ${parts} parts`);
    t.same(ranges[0]!.start, start, 'the first range starts where the scan does');
    t.same(ranges.at(-1)!.end, end, 'the last range ends where the scan does');
    const seen: string[] = [];
    for (let i = 0; i < ranges.length; i++) {
      const r = ranges[i]!;
      if (i > 0) t.same(r.start, ranges[i - 1]!.end, 'contiguous');
      const keys = [...db.getKeys({ start: r.start, end: r.end })].map((k) => Buffer.from(k as Buffer));
      if (i > 0 && keys.length > 0)
        t.equal(rowKeyEnd(keys[0]!) > 0 && keys[0]!.subarray(0, rowKeyEnd(keys[0]!)).equals(r.start!), true, 'a range begins at a row start');
      seen.push(...keys.map((k) => k.toString('hex')));
    }
    const inScan = all.filter((k) => (start === undefined || k >= start.toString('hex')) && (end === undefined || k < end.toString('hex')));
    t.same(seen, inScan, 'every key of the scan exactly once, in order');
  }
  t.ok(splitRange(db, undefined, undefined, 16).length > 4, 'skewed keys still split');
});

t.test('values larger than lmdb-js read buffer (up to 1 MB) come through the scan threads intact', async (t) => {
  await store.createTable('i', parseLayout(SAMPLE_LAYOUT.replace('name: "sample_table"', 'name: "big_values"')));
  const rows: RowWrite[] = [];
  for (let i = 0; i < 60; i++) {
    const size = [10, 5000, 70_000, 300_000, 1_000_000][i % 5]!;
    rows.push({
      rowKey: encodeRowKey(layout.keyFormat, [i]),
      cells: [
        { kind: 'value', family: 'strings', qualifier: 'q', timestamp: 1, schemaId: 0, json: JSON.stringify(String.fromCharCode(97 + (i % 26)).repeat(size)) },
      ],
    });
  }
  await store.write('i', 'big_values', rows);
  store.parallelScan.partBytes = 64 * 1024;
  const request: ScanRequest = { limit: -1, read: parseReadSpec(layout, {}) };
  const expected = await serializedScan(store, 'i', 'big_values', request, layout, 3);
  const before = store.scanPool!.partsSubmitted;
  const { text } = await renderedScan(store, 'i', 'big_values', request, 3);
  t.ok(store.scanPool!.partsSubmitted > before, 'rendered on the scan threads');
  t.equal(text, expected);
});

t.test('a scan worker that cannot start fails its scan with the reason, and later scans run on the calling thread', async (t) => {
  const broken = new ScanPool('/dev/null/not-a-directory', 2);
  t.teardown(() => broken.close());
  let finished = 0;
  const scan = broken.scan({
    dbName: 'data/i/sample_table',
    layoutJson: JSON.stringify(layout.desc),
    read: parseReadSpec(layout, {}),
    render: rowRenderSpec(3),
    now: Date.now(),
    ranges: [{}, {}],
    chunkBytes: 1024,
    onFinish: () => finished++,
  });
  await t.rejects(scan.next(), /./, 'the scan fails');
  t.equal(finished, 1, 'and is released');
  t.ok(broken.failure !== undefined, `the pool remembers why: ${broken.failure}`);

  store.scanPool!.failure = 'simulated';
  t.teardown(() => {
    store.scanPool!.failure = undefined;
  });
  const before = store.scanPool!.partsSubmitted;
  let rows = 0;
  for await (const c of store.scanChunks('i', 'sample_table', { limit: -1, read: parseReadSpec(layout, {}) }, rowRenderSpec(3))) rows += c.rows;
  t.equal(rows, ROWS, 'every row, from the calling thread');
  t.equal(store.scanPool!.partsSubmitted, before, 'nothing went to the failed pool');
});

t.test('concurrent parallel scans share the workers and each gets its own rows in order', async (t) => {
  store.parallelScan.partBytes = 8 * 1024;
  const reads = [{}, { versions: 'all' }, { cols: 'strings' }];
  const expected = await Promise.all(reads.map((q) => expectedText({ limit: -1, read: parseReadSpec(layout, q) }, 3)));
  const before = store.scanPool!.partsSubmitted;
  const got = await Promise.all(
    reads.map(async (q) => (await renderedScan(store, 'i', 'sample_table', { limit: -1, read: parseReadSpec(layout, q) }, 3)).text),
  );
  t.ok(store.scanPool!.partsSubmitted - before > 30, 'all three ran on the pool');
  for (let i = 0; i < reads.length; i++) t.equal(got[i], expected[i], JSON.stringify(reads[i]));
  t.equal(store.openScans, 0);
});

t.test('a thread loads its Arrow and Avro encoders at their first part; parts queued behind the load keep their order', async (t) => {
  // A store of its own: its threads have loaded no encoder yet.
  const fresh = await openSampleStore(t, { scanThreads: 2, parallelScan: { minBytes: 0, partBytes: 8 * 1024 } });
  await fresh.store.write('i', 'sample_table', sampleRows(fresh.layout, ROWS));
  const request: ScanRequest = { limit: -1, read: parseReadSpec(fresh.layout, {}) };
  const sync = Buffer.alloc(16, 7);
  const bytesOf = (spec: ChunkSpec): Promise<Buffer> => chunkScanBytes(fresh.store, 'i', 'sample_table', request, spec);
  const specs = [arrowBatchSpec(-1), { avro: { withSchema: true, codec: 'null' as const, sync } }, rowRenderSpec(3), arrowBatchSpec(-1)];
  // All at once: the first parts of each kind reach threads that have not loaded their encoder.
  const before = fresh.store.scanPool!.partsSubmitted;
  const concurrent = await Promise.all(specs.map(bytesOf));
  t.ok(fresh.store.scanPool!.partsSubmitted - before > 4 * 10, 'every scan ran on the pool, in many parts');
  // Again one at a time, every encoder loaded: the same bytes.
  for (let i = 0; i < specs.length; i++) t.ok(concurrent[i]!.equals(await bytesOf(specs[i]!)), `scan ${i} (${Object.keys(specs[i]!)[0]}): the same bytes`);
  t.equal(
    concurrent[2]!.toString('utf8'),
    await serializedScan(fresh.store, 'i', 'sample_table', request, fresh.layout, 3),
    'the JSON scan: the single-thread bytes',
  );
  t.equal(fresh.store.openScans, 0);
});
