/**
 * Backpressure and disconnects on the single-thread scan path (RowStream over a store scan on the
 * calling thread: any explicit `limit`, wildcard `eid`, small tables, `scanThreads: 0`, Bigtable).
 * backpressure.test.ts covers the scan threads (limit=-1 on a large table); here a table far
 * larger than the socket buffers is read with `limit=1000000` and with a wildcard eid: a paused
 * client makes the server stop pulling rows (live heap + external memory stays bounded, Buffers
 * included), and a client that goes away releases the store scan at once.
 */
import { request, type ClientRequest } from 'node:http';
import t, { type Test } from 'tap';
import { encodeRowKey } from '../../lib/model/keys/row-key.js';
import type { RowWrite } from '../../lib/model/types.js';
import type { LmdbStore } from '../../lib/store/lmdb/lmdb-store.js';
import { startGateway, type Harness } from './harness.js';
import { countPulledRows, heldMemory } from './instrument.js';

const ROWS = 200_000;
const VALUE = JSON.stringify('x'.repeat(200));
/** ~260 bytes of row JSON each: ~52 MB for the table, far more than loopback socket buffers hold. */
const TABLE_JSON_BYTES = ROWS * 260;
/**
 * Rows the server may pull while the client is paused: what the socket buffers (kernel send and
 * receive, a few MB on loopback), the RowStream's 64 KiB high-water mark and one 256 KiB chunk can
 * hold; ~16,000 measured. Without backpressure it would be all 200,000.
 */
const MAX_PULLED_WHILE_PAUSED = ROWS / 5;
/** Live memory growth allowed while paused; buffering the whole scan would be ~52 MB of Buffers. */
const MAX_MEMORY_GROWTH = 16 * 1024 * 1024;

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Starts a GET, takes the first chunk, then stops reading; resolves once paused with the request (to destroy). */
function pausedClient(t: Test, base: string, path: string): Promise<{ req: ClientRequest; status: number; bytes: number }> {
  const url = new URL(base);
  return new Promise((resolve, reject) => {
    const req = request({ host: url.hostname, port: url.port, path }, (res) => {
      res.once('data', (chunk: Buffer) => {
        res.pause();
        resolve({ req, status: res.statusCode ?? 0, bytes: chunk.length });
      });
      res.on('error', () => undefined);
    });
    req.on('error', (e: NodeJS.ErrnoException) => {
      if (e.code !== 'ECONNRESET') reject(e);
    });
    req.end();
    t.teardown(() => req.destroy());
  });
}

/** Destroys the client's socket and measures how long the store takes to close the scan. */
async function disconnect(t: Test, h: Harness, req: ClientRequest, counter: { pulled: number }): Promise<void> {
  const at = Date.now();
  req.destroy();
  while (h.store.openScans > 0 && Date.now() - at < 2000) await sleep(5);
  const ms = Date.now() - at;
  t.equal(h.store.openScans, 0, 'the disconnect released the store scan');
  t.ok(ms < 500, `within ${ms} ms`);
  t.equal(h.gateway.context.scans.active, 0, 'and the gateway scan slot');
  const pulledAtClose = counter.pulled;
  await sleep(200);
  t.equal(counter.pulled, pulledAtClose, 'nothing more is read after the disconnect');
}

let h: Harness;
let counter: { pulled: number };

t.before(async () => {
  h = await startGateway();
  const layout = await h.store.getLayout('default', 'sample_table');
  for (let start = 0; start < ROWS; start += 50_000) {
    const batch: RowWrite[] = [];
    for (let i = start; i < start + 50_000; i++) {
      batch.push({
        rowKey: encodeRowKey(layout.keyFormat, [BigInt(i)]),
        cells: [{ kind: 'value', family: 'strings', qualifier: 'q', timestamp: 1, schemaId: 0, json: VALUE }],
      });
    }
    await h.store.write('default', 'sample_table', batch);
  }
  counter = countPulledRows(h.store);
});
t.teardown(() => h.close());

/**
 * The paused client got its first chunk; once the server has had time to fill every buffer it can,
 * it has stopped pulling rows, pulled only a bounded number, and the scan is still open.
 */
async function expectPullingStopped(t: Test, client: { status: number; bytes: number }, pending: string): Promise<void> {
  t.equal(client.status, 200);
  t.ok(client.bytes > 0, 'the client got the first chunk');
  await sleep(1200);
  const pulled = counter.pulled;
  await sleep(400);
  t.equal(counter.pulled, pulled, `the server stopped pulling rows while the client is paused (${pulled} pulled)`);
  t.ok(pulled < MAX_PULLED_WHILE_PAUSED, `only ${pulled} of ${ROWS} rows were pulled while the client was paused`);
  t.equal(h.store.openScans, 1, pending);
}

t.test('limit=1000000 on a large table: a paused client keeps pulled rows and memory bounded; a disconnect closes the scan', async (t) => {
  const pool = (h.store as LmdbStore).scanPool;
  const partsBefore = pool?.partsSubmitted ?? 0;
  counter.pulled = 0;
  const memoryBefore = heldMemory();
  const client = await pausedClient(t, h.base, '/v1/instances/default/tables/sample_table/rows?limit=1000000');
  await expectPullingStopped(t, client, 'the scan is pending');
  t.equal(pool?.partsSubmitted ?? 0, partsBefore, 'the scan ran on the calling thread, not the scan threads');
  const growth = heldMemory() - memoryBefore;
  t.ok(
    growth < MAX_MEMORY_GROWTH,
    `live heap + external memory grew by ${(growth / 1048576).toFixed(1)} MB while ~${Math.round(TABLE_JSON_BYTES / 1048576)} MB of rows are pending`,
  );
  await disconnect(t, h, client.req, counter);
});

t.test('wildcard eid on a large table: a paused client keeps pulled rows bounded; a disconnect closes the scan', async (t) => {
  counter.pulled = 0;
  const eid = encodeURIComponent('[[]]');
  const client = await pausedClient(t, h.base, `/v1/instances/default/tables/sample_table/rows?eid=${eid}&limit=-1`);
  await expectPullingStopped(t, client, 'the wildcard scan is pending');
  await disconnect(t, h, client.req, counter);
});
