/**
 * Graceful close: running requests finish, new connections are refused, and a kept-alive client
 * does not hold the shutdown for the whole shutdownGraceMs.
 */
import { Agent, request } from 'node:http';
import { connect } from 'node:net';
import { once } from 'node:events';
import t from 'tap';
import { startGateway, writeFillerRows } from './harness.js';

const ROWS = '/v1/instances/default/tables/sample_table/rows';

function get(base: string, path: string, agent: Agent): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const req = request(`${base}${path}`, { agent }, (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (c: string) => (body += c));
      res.on('end', () => resolve({ status: res.statusCode!, body }));
      res.on('error', reject);
    });
    req.on('error', reject);
    req.end();
  });
}

t.test('regression: close() returns soon after the running scan ends, though its client keeps the connection alive', async (t) => {
  const h = await startGateway({ limits: { shutdownGraceMs: 10_000 } });
  let closed = false;
  t.teardown(async () => {
    if (!closed) await h.close();
  });
  await writeFillerRows(h.store, 20_000, 1000);
  const agent = new Agent({ keepAlive: true, maxSockets: 1 });
  t.teardown(() => agent.destroy());
  t.equal((await get(h.base, `${ROWS}?limit=1`, agent)).status, 200, 'a first request leaves a kept-alive connection');

  // A ~20 MB scan that the client reads only after close() has begun.
  const scan = new Promise<{ status: number; bytes: number; connection: string | undefined }>((resolve, reject) => {
    const req = request(`${h.base}${ROWS}?limit=-1`, { agent }, (res) => {
      res.pause();
      let bytes = 0;
      res.on('data', (c: Buffer) => (bytes += c.length));
      res.on('end', () => resolve({ status: res.statusCode!, bytes, connection: res.headers.connection }));
      res.on('error', reject);
      setTimeout(() => res.resume(), 500);
    });
    req.on('error', reject);
    req.end();
  });
  while (h.gateway.context.scans.active === 0) await new Promise((r) => setTimeout(r, 10));
  const started = Date.now();
  const closing = h.gateway.close().then(() => Date.now() - started);

  const url = new URL(h.base);
  const refused = connect(Number(url.port), url.hostname);
  const outcome = await Promise.race([once(refused, 'error').then(() => 'refused'), once(refused, 'connect').then(() => 'accepted')]);
  refused.destroy();
  t.equal(outcome, 'refused', 'a new connection is refused once close() began');

  const done = await scan;
  t.equal(done.status, 200);
  t.ok(done.bytes > 19_000_000, `the running scan finished whole (${done.bytes} bytes)`);
  const ms = await closing;
  closed = true;
  await h.store.close();
  // Without closing the idle kept-alive socket, close() waited the full 10 s grace period.
  t.ok(ms < 8000, `close() returned ${ms} ms after it began, well before shutdownGraceMs (10000)`);
});

t.test(
  'regression: a client hanging up on its scan while the gateway and the store close does not crash the process (SIGSEGV in mdb_cursor_close)',
  async (t) => {
    // The response was torn down a tick after the store had closed, and its scan then closed an
    // LMDB cursor of the freed environment (the flaky end of limits.test.ts). A use after free
    // crashes only sometimes: 19 of 30 one-round processes of this sequence died (exit 139), and
    // this file, six rounds, died in 1 of 4 runs before the fix. test/store/lmdb-close.test.ts
    // pins the fix itself (close() ends every open scan) in every run.
    for (let round = 0; round < 6; round++) {
      const h = await startGateway({ limits: { shutdownGraceMs: 10_000 } });
      await writeFillerRows(h.store, 8000, 2000);
      const url = new URL(h.base);
      const socket = connect(Number(url.port), url.hostname);
      await once(socket, 'connect');
      socket.on('error', () => undefined);
      // ~16 MB asked for and none read: the scan waits on a full socket. A limit keeps it on this
      // thread (a whole-table export of a large table runs on the scan threads, without this cursor).
      socket.pause();
      socket.write(`GET ${ROWS}?limit=100000 HTTP/1.1\r\nHost: x\r\n\r\n`);
      while (h.gateway.context.scans.active === 0) await new Promise((r) => setTimeout(r, 10));
      // Read a little, as a slow client does, so that the scan is well into the table.
      for (let got = 0, reads = 0; got < 2 * 1024 * 1024 && reads < 500; reads++) {
        const chunk = socket.read() as Buffer | null;
        if (chunk === null) await new Promise((r) => setTimeout(r, 1));
        else got += chunk.length;
      }
      socket.destroy();
      await h.close();
      await new Promise((r) => setTimeout(r, 50)); // the torn-down response's late cleanup runs here
      t.equal(h.store.openScans, 0, `round ${round}: the store ended the scan`);
    }
  },
);
