// A whole-table export over HTTP rendered on the scan threads sends exactly the bytes of the
// single-thread scan (the same table read with a row limit, which stays on the main thread),
// plain and gzip-compressed; CR LF framing and row order included.
import { get } from 'node:http';
import { gunzipSync } from 'node:zlib';
import t from 'tap';
import { encodeRowKey } from '../../lib/model/keys/row-key.js';
import type { RowWrite } from '../../lib/model/types.js';
import { pino } from 'pino';
import { buildConfig } from '../../lib/config/config.js';
import { createGateway } from '../../lib/http/server.js';
import { openSampleStore } from '../store/lmdb-fixtures.js';
import { raw } from './harness.js';

const ROWS = 5000;

function getGzip(url: string): Promise<{ encoding: string | undefined; body: Buffer }> {
  return new Promise((resolve, reject) => {
    get(url, { headers: { 'accept-encoding': 'gzip' } }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => resolve({ encoding: res.headers['content-encoding'], body: Buffer.concat(chunks) }));
      res.on('error', reject);
    }).on('error', reject);
  });
}

t.test('GET rows?limit=-1 on the scan threads equals the single-thread rows, for every revision', async (t) => {
  // One store (and one pool: a worker's first start compiles its TypeScript under the test runner,
  // ~7 s) served by one gateway per revision.
  const { store, layout } = await openSampleStore(t, { scanThreads: 2, parallelScan: { minBytes: 0, partBytes: 16 * 1024 } }, 'default');
  const rows: RowWrite[] = [];
  for (let i = 0; i < ROWS; i++) {
    rows.push({
      rowKey: encodeRowKey(layout.keyFormat, [BigInt(i)]),
      cells: [
        { kind: 'value', family: 'strings', qualifier: `q${i % 7}`, timestamp: 1000 + i, schemaId: 0, json: JSON.stringify(`row ${i} \r\n "é"`) },
        { kind: 'value', family: 'longs', qualifier: 'n', timestamp: 5, schemaId: 3, json: String(i * 31) },
      ],
    });
  }
  await store.write('default', 'sample_table', rows);
  for (const revision of [1, 2, 3] as const) {
    const gateway = createGateway(buildConfig({ port: 0, host: '127.0.0.1', revision, compression: true }), store, pino({ level: 'silent' }));
    const base = `http://127.0.0.1:${(await gateway.listen()).port}`;
    const path = '/v1/instances/default/tables/sample_table/rows';
    const before = store.scanPool!.partsSubmitted;
    const parallel = await raw(base, 'GET', `${path}?limit=-1`);
    t.ok(store.scanPool!.partsSubmitted > before + 10, `revision ${revision}: the export ran on the scan threads`);
    const single = await raw(base, 'GET', `${path}?limit=${ROWS + 1}`);
    t.equal(parallel.status, 200);
    t.equal(parallel.body.split('\r\n').length - 1, ROWS, `revision ${revision}: every row, CR LF framed`);
    t.equal(parallel.body, single.body, `revision ${revision}: the same bytes as the single-thread scan`);
    const gz = await getGzip(`${base}${path}?limit=-1`);
    t.equal(gz.encoding, 'gzip');
    t.equal(gunzipSync(gz.body).toString('utf8'), single.body, `revision ${revision}: gzip of the same bytes`);
    t.equal(store.openScans, 0, 'every scan closed');
    t.equal(gateway.context.scans.active, 0, 'every scan slot released');
    await gateway.close();
  }
});
