/**
 * Scan chunk buffers given back to the scan threads (scan-pool.ts, lib/rows/lent-bytes.ts,
 * GatewayResponse.write): a chunk's memory goes back to the worker only after the socket took
 * the write, and the worker renders later chunks into it. If a buffer went back too early, the
 * worker would overwrite bytes still on their way out: every scan here is compared byte for byte
 * with the single-thread rendering, with fast and slow readers, several scans at once (one scan's
 * buffers rendered into for another's), and compressed scans (whose chunks are not given back).
 */
import { request } from 'node:http';
import { gunzipSync } from 'node:zlib';
import t from 'tap';
import { parseReadSpec } from '../../lib/model/read/read-request.js';
import type { ScanRequest } from '../../lib/store/store.js';
import { openSampleStore, sampleRows, serializedScan } from '../store/lmdb-fixtures.js';
import { startGatewayOver } from './harness.js';

const ROWS = 4000;

const { store, layout } = await openSampleStore(t, { scanThreads: 2, parallelScan: { minBytes: 0, partBytes: 8 * 1024 } }, 'i');
await store.write('i', 'sample_table', sampleRows(layout, ROWS));
const plain = await startGatewayOver(store);
const compressing = await startGatewayOver(store, { compression: true });
t.teardown(async () => {
  await plain.close();
  await compressing.close();
});
const pool = store.scanPool!;

const READS: Record<string, string>[] = [{}, { versions: 'all' }, { cols: 'strings,longs:n5' }];

function expected(query: Record<string, string>): Promise<string> {
  const scan: ScanRequest = { limit: -1, read: parseReadSpec(layout, query) };
  return serializedScan(store, 'i', 'sample_table', scan, layout, 3);
}

/** The scan's body; a `slow` reader pauses after every piece it gets, so writes wait for it. */
function scan(base: string, query: Record<string, string>, options: { slow?: boolean; gzip?: boolean } = {}): Promise<Buffer> {
  const url = new URL(`${base}/v1/instances/i/tables/sample_table/rows`);
  url.search = new URLSearchParams({ limit: '-1', ...query }).toString();
  return new Promise((resolve, reject) => {
    const req = request(
      { host: url.hostname, port: url.port, path: url.pathname + url.search, headers: options.gzip ? { 'accept-encoding': 'gzip' } : {} },
      (res) => {
        const parts: Buffer[] = [];
        res.on('data', (c: Buffer) => {
          parts.push(c);
          if (options.slow) {
            res.pause();
            setTimeout(() => res.resume(), 2);
          }
        });
        res.on('end', () => {
          const body = Buffer.concat(parts);
          resolve(res.headers['content-encoding'] === 'gzip' ? gunzipSync(body) : body);
        });
        res.on('error', reject);
      },
    );
    req.on('error', reject);
    req.end();
  });
}

t.test('a scan over HTTP sends the single-thread bytes, and its chunk buffers go back to the scan threads', async (t) => {
  for (const query of READS) {
    const before = pool.buffersGivenBack;
    const want = await expected(query);
    for (const slow of [false, true]) {
      const got = (await scan(plain.base, query, { slow })).toString('utf8');
      t.equal(got, want, `${JSON.stringify(query)}, ${slow ? 'slow' : 'fast'} reader`);
    }
    t.ok(pool.buffersGivenBack > before, `${pool.buffersGivenBack - before} chunk buffers went back to the scan threads`);
  }
  t.equal(store.openScans, 0, 'every scan closed');
});

t.test('several scans at once, each rendered partly into buffers another scan sent, send their own bytes', async (t) => {
  const wants = await Promise.all(READS.map(expected));
  for (let round = 0; round < 3; round++) {
    const bodies = await Promise.all(READS.flatMap((query, i) => [0, 1].map(async (k) => ({ i, body: await scan(plain.base, query, { slow: k === 1 }) }))));
    for (const { i, body } of bodies) t.equal(body.toString('utf8'), wants[i], `round ${round}: ${JSON.stringify(READS[i])}`);
  }
  t.equal(store.openScans, 0, 'every scan closed');
});

t.test('a compressed scan keeps its chunks (they go through gzip, not straight to the socket) and sends the same rows', async (t) => {
  const before = pool.buffersGivenBack;
  const got = await scan(compressing.base, {}, { gzip: true });
  t.equal(got.toString('utf8'), await expected({}));
  t.equal(pool.buffersGivenBack, before, 'no buffer went back');
});
