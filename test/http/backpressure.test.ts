/**
 * Backpressure and disconnects on a 300,000-row scan (~75 MB of JSON): a client that stops reading
 * makes the server stop pulling rows from the store (bounded memory), and a client that goes away
 * mid-scan releases the store scan at once. The table is 6 times what a paused client may have
 * pulled (PULL_BOUND, rows in socket buffers and parts rendered ahead); without backpressure the
 * scan threads render all of it within the pause. (It was 1,000,000 rows: writing them was most of
 * this file's 18 s of CPU in CI, and the size proved nothing more.)
 *
 * Run under revisions 3 and 1, over the same rows (written once): the revisions render rows
 * differently (JSON vs shell entity ids, writer_schema or not) on the scan threads; revision 2
 * shares revision 1's code paths (shellDialect, the shell render spec), so 3 and 1 are enough for
 * a test this heavy.
 */
import { request, type ClientRequest } from 'node:http';
import t, { type Test } from 'tap';
import type { LmdbStore } from '../../lib/store/lmdb/lmdb-store.js';
import { countPulledRows } from './instrument.js';
import { startGateway, startGatewayOver, type Harness, writeFillerRows } from './harness.js';

const ROWS = 300_000;
/** Rows a paused client may have caused to be pulled: 1/20 of the 1,000,000 rows this file once wrote. */
const PULL_BOUND = 50_000;

/**
 * Starts a full-table scan through `h`, stops reading after the first chunk, checks that the
 * gateway and the store stopped reading ahead, then disconnects and checks the scan is released.
 */
async function pausedThenDisconnected(t: Test, h: Harness, counter: { pulled: number }, revision: 1 | 3): Promise<void> {
  const pool = (h.store as LmdbStore).scanPool;
  const partsBefore = pool?.partsSubmitted ?? 0;
  const deliveredBefore = pool?.partsDelivered ?? 0;
  const pulledBefore = counter.pulled;
  const heapBefore = process.memoryUsage().heapUsed;
  const url = new URL(`${h.base}/v1/instances/default/tables/sample_table/rows?limit=-1`);
  let req: ClientRequest | undefined;
  const first = await new Promise<string>((resolve, reject) => {
    req = request({ host: url.hostname, port: url.port, path: url.pathname + url.search }, (res) => {
      res.once('data', (chunk: Buffer) => {
        res.pause();
        setTimeout(() => resolve(chunk.toString('utf8')), 1500);
      });
      res.on('error', () => undefined);
    });
    req.on('error', reject);
    req.end();
  });
  t.teardown(() => req!.destroy());
  t.ok(first.length > 0, 'the client got the first chunk');
  t.ok(first.startsWith(revision === 3 ? '{"entityId":[' : '{"entityId":"['), `rows in the revision ${revision} form: ${first.slice(0, 40)}`);
  t.equal(h.store.openScans, 1, 'the scan is pending');
  const pulled = counter.pulled - pulledBefore;
  t.ok(pulled > 0 && pulled < PULL_BOUND, `only ${pulled} of ${ROWS} rows were pulled while the client was paused`);
  // A table this large is exported by the scan pool's threads: they render only a few parts ahead.
  t.ok(pool !== undefined && pool.partsSubmitted > partsBefore, 'the export ran on the scan threads');
  // Parts rendered but not yet handed on to the socket: what the scan holds while the client is paused.
  const delivered = pool!.partsDelivered - deliveredBefore;
  const ahead = pool!.partsSubmitted - partsBefore - delivered;
  t.ok(ahead <= pool!.threads * 2 + 1, `${ahead} parts rendered ahead while the client was paused (${delivered} went to the socket's buffers)`);
  const heapGrowth = process.memoryUsage().heapUsed - heapBefore;
  t.ok(
    heapGrowth < 50 * 1024 * 1024,
    `heap grew by ${Math.round(heapGrowth / 1048576)} MB while ${ROWS} rows (~${Math.round((ROWS * 260) / 1048576)} MB of JSON) are pending`,
  );

  req!.destroy();
  const deadline = Date.now() + 2000;
  while (h.store.openScans > 0 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 10));
  t.equal(h.store.openScans, 0, 'the disconnect released the store scan');
  t.equal(h.gateway.context.scans.active, 0, 'and the gateway scan slot');
  const pulledAtClose = counter.pulled;
  await new Promise((r) => setTimeout(r, 200));
  t.equal(counter.pulled, pulledAtClose, 'nothing more is read after the disconnect');
}

t.test('a paused client keeps the server from reading ahead; a disconnect closes the scan', async (t) => {
  const h = await startGateway();
  t.teardown(() => h.close());
  await writeFillerRows(h.store, ROWS, 200, { char: 'x' });
  const counter = countPulledRows(h.store);
  await t.test('revision 3', (t) => pausedThenDisconnected(t, h, counter, 3));
  await t.test('revision 1 (a second gateway over the same rows)', async (t) => {
    const legacy = await startGatewayOver(h.store, { revision: 1 });
    t.teardown(() => legacy.close());
    await pausedThenDisconnected(t, legacy, counter, 1);
  });
});
