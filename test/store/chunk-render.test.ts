// The LMDB scan fast path (scanChunks) renders exactly the bytes of scan() + rowSerializer, for
// every revision, column selection, version limit, time range, counters and escaped qualifiers.
import t from 'tap';
import { encodeRowKey } from '../../lib/model/keys/row-key.js';
import { parseReadSpec } from '../../lib/model/read/read-request.js';
import type { ScanRequest } from '../../lib/store/store.js';
import { openSampleStore, renderedScan, sampleRows, serializedScan } from './lmdb-fixtures.js';

t.test('scanChunks equals scan + rowSerializer', async (t) => {
  const { store, layout } = await openSampleStore(t);
  await store.write('i', 'sample_table', sampleRows(layout, 2000));
  const reads = [{}, { versions: '2' }, { versions: 'all', timerange: '105..125' }, { cols: 'strings,group_family:counter' }, { cols: 'longs:n5,longs:n10' }];
  for (const revision of [1, 2, 3] as const) {
    for (const q of reads) {
      for (const limit of [-1, 7]) {
        const request: ScanRequest = { limit, read: parseReadSpec(layout, q) };
        const expected = await serializedScan(store, 'i', 'sample_table', request, layout, revision);
        const { text: got, rows: count } = await renderedScan(store, 'i', 'sample_table', request, revision);
        t.equal(got, expected, `revision ${revision} ${JSON.stringify(q)} limit ${limit}`);
        t.equal(count, expected === '' ? 0 : expected.split('\r\n').length - 1);
      }
    }
  }
  t.equal(store.openScans, 0, 'every scan closed');
});

t.test('timestamps at every digit-count boundary render as their decimal text', async (t) => {
  const { store, layout } = await openSampleStore(t, { scanThreads: 0 });
  const stamps = [
    0,
    1,
    9,
    10,
    99,
    100,
    101,
    1009,
    99_999_999,
    100_000_000,
    100_000_001,
    100_000_010,
    1_000_000_007,
    1_700_000_000_000,
    1_700_000_000_100,
    2 ** 45,
    2 ** 52,
    Number.MAX_SAFE_INTEGER,
  ];
  for (let k = 1; k <= 15; k++) stamps.push(10 ** k - 1, 10 ** k, 10 ** k + 1, 10 ** k + 10 ** (k - 1));
  const rows = stamps.map((ts, i) => ({
    rowKey: encodeRowKey(layout.keyFormat, [i]),
    cells: [{ kind: 'value' as const, family: 'longs', qualifier: 'n', timestamp: ts, schemaId: 3, json: String(ts) }],
  }));
  await store.write('i', 'sample_table', rows);
  const request: ScanRequest = { limit: -1, read: parseReadSpec(layout, { versions: 'all' }) };
  const expected = await serializedScan(store, 'i', 'sample_table', request, layout, 3);
  const { text: got } = await renderedScan(store, 'i', 'sample_table', request, 3);
  t.equal(got, expected);
  for (const ts of stamps) t.ok(got.includes(`"timestamp":${ts},`), `timestamp ${ts}`);
});
