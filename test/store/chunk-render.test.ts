// The LMDB scan fast path (scanChunks) renders exactly the bytes of scan() + rowSerializer, for
// every revision, column selection, version limit, time range, counters and escaped qualifiers.
import t from 'tap';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { rowRenderSpec, rowSerializer } from '../../lib/http/row-format.js';
import { parseLayout } from '../../lib/model/layout.js';
import { encodeRowKey } from '../../lib/model/row-key.js';
import { parseReadSpec } from '../../lib/model/read-request.js';
import { LmdbStore } from '../../lib/store/lmdb/lmdb-store.js';
import type { ScanRequest } from '../../lib/store/store.js';
import { SAMPLE_LAYOUT } from '../http/harness.js';

t.test('scanChunks equals scan + rowSerializer', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'rowgate-chunks-'));
  const store = new LmdbStore({ path: dir, noSync: true });
  t.teardown(async () => {
    await store.close();
    rmSync(dir, { recursive: true, force: true });
  });
  await store.createInstance('i');
  const layout = parseLayout(SAMPLE_LAYOUT);
  await store.createTable('i', layout);
  const rows = [];
  for (let i = 0; i < 2000; i++) {
    const key = encodeRowKey(layout.keyFormat, [i]);
    const cells = [];
    for (let v = 0; v < (i % 4) + 1; v++) cells.push({ kind: 'value' as const, family: 'group_family', qualifier: 'string_qualifier', timestamp: 100 + v * 10 + (i % 3), schemaId: 0, json: JSON.stringify(`v${i}.${v}\r\n"é"`) });
    cells.push({ kind: 'counter-set' as const, family: 'group_family', qualifier: 'counter', timestamp: 50, value: BigInt(i) * 1_000_000_000_000n });
    if (i % 3 === 0) cells.push({ kind: 'value' as const, family: 'strings', qualifier: `q\u0000${i % 11}"\\ü`, timestamp: 2 ** 45 + i, schemaId: 0, json: '"s"' });
    if (i % 5 === 0) cells.push({ kind: 'value' as const, family: 'longs', qualifier: `n${i % 300}`, timestamp: 7, schemaId: 3, json: String(i) });
    rows.push({ rowKey: key, cells });
  }
  await store.write('i', 'sample_table', rows);
  const reads = [
    {},
    { versions: '2' },
    { versions: 'all', timerange: '105..125' },
    { cols: 'strings,group_family:counter' },
    { cols: 'longs:n5,longs:n10' },
  ];
  for (const revision of [1, 2, 3] as const) {
    for (const q of reads) {
      for (const limit of [-1, 7]) {
        const request: ScanRequest = { limit, read: parseReadSpec(layout, q) };
        const serialize = rowSerializer(layout.keyFormat, revision);
        let expected = '';
        for await (const batch of store.scan('i', 'sample_table', request)) for (const row of batch) expected += serialize(row) + '\r\n';
        const chunks: Buffer[] = [];
        let count = 0;
        for await (const c of store.scanChunks('i', 'sample_table', request, rowRenderSpec(revision))) {
          chunks.push(c.bytes);
          count += c.rows;
        }
        const got = Buffer.concat(chunks).toString('utf8');
        t.equal(got, expected, `revision ${revision} ${JSON.stringify(q)} limit ${limit}`);
        t.equal(count, expected === '' ? 0 : expected.split('\r\n').length - 1);
      }
    }
  }
  t.equal(store.openScans, 0, 'every scan closed');
});

t.test('timestamps at every digit-count boundary render as their decimal text', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'rowgate-chunks-'));
  const store = new LmdbStore({ path: dir, noSync: true, scanThreads: 0 });
  t.teardown(async () => {
    await store.close();
    rmSync(dir, { recursive: true, force: true });
  });
  await store.createInstance('i');
  const layout = parseLayout(SAMPLE_LAYOUT);
  await store.createTable('i', layout);
  const stamps = [0, 1, 9, 10, 99, 100, 101, 1009, 99_999_999, 100_000_000, 100_000_001, 100_000_010, 1_000_000_007, 1_700_000_000_000, 1_700_000_000_100, 2 ** 45, 2 ** 52, Number.MAX_SAFE_INTEGER];
  for (let k = 1; k <= 15; k++) stamps.push(10 ** k - 1, 10 ** k, 10 ** k + 1, 10 ** k + 10 ** (k - 1));
  const rows = stamps.map((ts, i) => ({ rowKey: encodeRowKey(layout.keyFormat, [i]), cells: [{ kind: 'value' as const, family: 'longs', qualifier: 'n', timestamp: ts, schemaId: 3, json: String(ts) }] }));
  await store.write('i', 'sample_table', rows);
  const read = parseReadSpec(layout, { versions: 'all' });
  const request: ScanRequest = { limit: -1, read };
  const serialize = rowSerializer(layout.keyFormat, 3);
  let expected = '';
  for await (const batch of store.scan('i', 'sample_table', request)) for (const row of batch) expected += serialize(row) + '\r\n';
  let got = '';
  for await (const c of store.scanChunks('i', 'sample_table', request, rowRenderSpec(3))) got += c.bytes.toString('utf8');
  t.equal(got, expected);
  for (const ts of stamps) t.ok(got.includes(`"timestamp":${ts},`), `timestamp ${ts}`);
});
