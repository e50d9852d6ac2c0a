/**
 * Limits enforced before work is done: slow senders dropped (headers and request timeouts),
 * idle keep-alive connections closed, oversized heads refused (431), concurrent scans bounded
 * (503 + Retry-After), limit/eids counts bounded (400), cells of a POST bounded (413), scans whose
 * client reads nothing dropped.
 */
import { once } from 'node:events';
import { createServer } from 'node:http';
import { connect, type Socket } from 'node:net';
import { setTimeout as delay } from 'node:timers/promises';
import t from 'tap';
import { checkingIntervalMs } from '../../lib/http/server.js';
import { dropWhenStalled } from '../../lib/http/stall.js';
import { buildConfig } from '../../lib/config/config.js';
import { json, raw, rowsOf, startGateway, type Harness, writeFillerRows } from './harness.js';

const TABLE = '/v1/instances/default/tables/sample_table';

function open(base: string): Promise<Socket> {
  const url = new URL(base);
  const socket = connect(Number(url.port), url.hostname);
  return once(socket, 'connect').then(() => socket);
}

/** Resolves with the ms until the server closed the socket, and what it sent. */
function closedAfter(socket: Socket, started: number): Promise<{ ms: number; received: string }> {
  let received = '';
  socket.on('data', (b: Buffer) => (received += b.toString('latin1')));
  socket.on('error', () => undefined);
  return new Promise((resolve) => socket.once('close', () => resolve({ ms: Date.now() - started, received })));
}

/**
 * ~40 MB of rows (20,000 of 2 KB): far more than the loopback socket buffers of a few connections
 * hold (a few MB each), so a scan of them must wait for its reader.
 */
async function fillSampleTable(h: Harness): Promise<void> {
  await writeFillerRows(h.store, 20_000, 2000);
}

t.test('node checks the timeouts often enough for them to act', async (t) => {
  t.equal(checkingIntervalMs(buildConfig({})), 1000, 'defaults (10 s headers): every second');
  t.equal(checkingIntervalMs(buildConfig({ limits: { headersTimeoutMs: 300, requestTimeoutMs: 1000 } })), 30);
  t.equal(checkingIntervalMs(buildConfig({ limits: { headersTimeoutMs: 10, requestTimeoutMs: 10 } })), 25);
});

t.test('a client sending its headers slowly is dropped after headersTimeoutMs', async (t) => {
  // requestTimeoutMs far above the bound asserted below: only the headers timeout can drop it in time.
  const h = await startGateway({ limits: { headersTimeoutMs: 400, requestTimeoutMs: 60_000 } });
  t.teardown(() => h.close());
  const socket = await open(h.base);
  const started = Date.now();
  const closed = closedAfter(socket, started);
  socket.write('GET /v1 HTTP/1.1\r\nHost: x\r\n');
  // One header byte every 50 ms: the connection is never idle, yet the head is never complete.
  const drip = setInterval(() => {
    if (!socket.destroyed) socket.write('X');
  }, 50);
  const { ms, received } = await closed;
  clearInterval(drip);
  t.ok(ms >= 350, `not before the timeout (${ms} ms)`);
  // Generous upper bound: a loaded CI machine delays timers by seconds; without the headers
  // timeout the drip would keep the connection open for a minute.
  t.ok(ms < 15_000, `dropped by the headers timeout, not the request timeout (${ms} ms)`);
  t.match(received, /^HTTP\/1\.1 408 [^]*"code":"RG_ERR_REQUEST_TIMEOUT"\}$/, 'answers the coded 408 before closing');
});

t.test('a client sending its body slowly is dropped after requestTimeoutMs', async (t) => {
  const h = await startGateway({ limits: { headersTimeoutMs: 300, requestTimeoutMs: 600 } });
  t.teardown(() => h.close());
  const socket = await open(h.base);
  const started = Date.now();
  const closed = closedAfter(socket, started);
  socket.write(`POST ${TABLE}/rows HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 100000\r\n\r\n[`);
  const drip = setInterval(() => {
    if (!socket.destroyed) socket.write(' ');
  }, 50);
  const { ms, received } = await closed;
  clearInterval(drip);
  // The drip would go on for 100,000 bytes (over 80 minutes): only the request timeout ends it.
  t.ok(ms >= 550 && ms < 15_000, `dropped after about requestTimeoutMs (${ms} ms)`);
  t.match(received, /^HTTP\/1\.1 408 [^]*"code":"RG_ERR_REQUEST_TIMEOUT"\}$/);
  t.equal((await raw(h.base, 'GET', `${TABLE}/rows`)).body, '', 'nothing was written');
});

t.test('an idle keep-alive connection is closed after keepAliveTimeoutMs', async (t) => {
  const h = await startGateway({ limits: { keepAliveTimeoutMs: 300 } });
  t.teardown(() => h.close());
  const socket = await open(h.base);
  let started = 0;
  socket.write('GET /v1/version HTTP/1.1\r\nHost: x\r\n\r\n');
  socket.once('data', () => (started = Date.now()));
  const closed = await closedAfter(socket, Date.now());
  t.match(closed.received, /^HTTP\/1\.1 200 /);
  t.match(closed.received, /keep-alive: timeout=0?\d/i);
  const idle = Date.now() - started;
  // Upper bound loose for loaded CI machines; the default keep-alive timeout (65 s) is far above it.
  t.ok(idle >= 250 && idle < 15_000, `closed after ${idle} ms idle`);
});

t.test('a request head larger than maxHeaderBytes is refused with 431', async (t) => {
  const h = await startGateway({ limits: { maxHeaderBytes: 4096 } });
  t.teardown(() => h.close());
  const ok = await raw(h.base, 'GET', '/v1', undefined, { 'x-pad': 'a'.repeat(2000) });
  t.equal(ok.status, 200);
  const socket = await open(h.base);
  const closed = closedAfter(socket, Date.now());
  socket.write(`GET /v1 HTTP/1.1\r\nHost: x\r\nX-Pad: ${'a'.repeat(8000)}\r\n\r\n`);
  const { received } = await closed;
  t.match(received, /^HTTP\/1\.1 431 [^]*"code":"RG_ERR_HEADERS_TOO_LARGE"\}$/, 'answers the coded 431 Request Header Fields Too Large and closes');
  t.equal((await raw(h.base, 'GET', '/v1')).status, 200, 'the server is still up');
});

// Scans, limit and eids exist in every revision: their limits are checked under each.
for (const revision of [1, 2, 3]) {
  t.test(`revision ${revision}: concurrent scans beyond maxScans: 503 with Retry-After, and the slot is released`, async (t) => {
    const h = await startGateway({ revision, limits: { maxScans: 1 } });
    t.teardown(() => h.close());
    // The slot is taken as a scan whose client does not read would take it (backpressure.test.ts
    // shows such a scan stays open); socket buffers make a real one slow to pin down here.
    h.gateway.context.scans.active = 1;
    const busy = await raw(h.base, 'GET', `${TABLE}/rows`);
    t.equal(busy.status, 503);
    t.equal(busy.headers['retry-after'], '1');
    t.equal(JSON.parse(busy.body).code, 'RG_ERR_TOO_MANY_SCANS');
    t.equal((await raw(h.base, 'GET', `${TABLE}/rows?eid=[1]`)).status, 200, 'point gets are not scans');
    h.gateway.context.scans.active = 0;
    t.equal((await raw(h.base, 'GET', `${TABLE}/rows?limit=1`)).status, 200, 'a new scan runs once the slot is free');
  });

  t.test(`revision ${revision}: limit and eids counts beyond the configured maximum are 400`, async (t) => {
    const h = await startGateway({ revision, limits: { maxLimit: 10, maxEids: 2 } });
    t.teardown(() => h.close());
    const over = await raw(h.base, 'GET', `${TABLE}/rows?limit=11`);
    t.equal(over.status, 400);
    t.equal(JSON.parse(over.body).code, 'RG_ERR_BAD_LIMIT');
    t.equal((await raw(h.base, 'GET', `${TABLE}/rows?limit=10`)).status, 200);
    const eids = await raw(h.base, 'GET', `${TABLE}/rows?limit=10&eids=${encodeURIComponent('[[1],[2],[3]]')}`);
    t.equal(eids.status, 400);
    t.match(JSON.parse(eids.body).exception, /at most 2/, eids.body);
  });

  t.test(`revision ${revision}: a POST body with more cells than maxPostCells is 413 naming the limit, and nothing is written`, async (t) => {
    const h = await startGateway({ revision, limits: { maxPostCells: 10 } });
    t.teardown(() => h.close());
    const id = (i: number) => (revision === 3 ? [i] : `[${i}]`);
    // Rows of two cells each: the sixth row brings the body to 12 cells.
    const row = (i: number) => ({ entityId: id(i), cells: { strings: { a: [{ value: 'x', timestamp: 1 }], b: [{ value: 'y', timestamp: 1 }] } } });
    const over = await raw(h.base, 'POST', `${TABLE}/rows`, JSON.stringify(Array.from({ length: 8 }, (_, i) => row(i))), json);
    t.equal(over.status, 413);
    t.same(JSON.parse(over.body), {
      exceptionName: 'RequestEntityTooLargeException',
      exception: 'request body holds more than 10 cells (limits.maxPostCells), the limit reached at row 5: split it into several POSTs',
      status: 413,
      code: 'RG_ERR_TOO_MANY_CELLS',
    });
    // The rest of the body is read (as JSON only, nothing held): a body that is not JSON as a whole
    // would be refused as such, however it was cut into chunks (fuzz: {}garbage).
    t.not(over.headers.connection, 'close', 'the body was read to its end: the connection stays open');
    t.equal((await raw(h.base, 'GET', `${TABLE}/rows?limit=-1`)).body, '', 'nothing was written');
    const chunked = await raw(h.base, 'POST', `${TABLE}/rows`, JSON.stringify(Array.from({ length: 8 }, (_, i) => row(i))), {
      ...json,
      'transfer-encoding': 'chunked',
    });
    t.equal(chunked.status, 413, 'also when sent chunked');
    t.equal(
      (await raw(h.base, 'POST', `${TABLE}/rows`, JSON.stringify(Array.from({ length: 5 }, (_, i) => row(i))), json)).status,
      200,
      '10 cells are accepted',
    );
    t.equal(rowsOf((await raw(h.base, 'GET', `${TABLE}/rows?limit=-1`)).body).length, 5);
  });
}

t.test("regression: with the default limits a too-long URL gets the coded 414, not node's bare 431", async (t) => {
  const h = await startGateway();
  t.teardown(() => h.close());
  const res = await raw(h.base, 'GET', `/v1/instances/default/tables/sample_table/rows?eids=${'[1],'.repeat(5000)}`);
  t.equal(res.status, 414);
  t.equal(JSON.parse(res.body).code, 'RG_ERR_URL_TOO_LONG');
});

t.test('a scan client that reads nothing is dropped after stallTimeoutMs and frees its maxScans slot', async (t) => {
  const h = await startGateway({ limits: { stallTimeoutMs: 300, maxScans: 1 } });
  t.teardown(() => h.close());
  await fillSampleTable(h);
  const socket = await open(h.base);
  const closed = once(socket, 'close');
  socket.on('error', () => undefined);
  socket.write(`GET ${TABLE}/rows?limit=-1 HTTP/1.1\r\nHost: x\r\n\r\n`);
  socket.pause(); // never reads: the server's writes fill the socket buffers and stop
  const started = Date.now();
  while (h.gateway.context.scans.active === 0 && Date.now() - started < 5000) await delay(20);
  t.equal(h.gateway.context.scans.active, 1, 'the scan started');
  while (h.gateway.context.scans.active > 0 && Date.now() - started < 20_000) await delay(50);
  const ms = Date.now() - started;
  t.equal(h.gateway.context.scans.active, 0, `the stalled scan was dropped (${ms} ms)`);
  t.ok(ms >= 250, `not before the stall timeout (${ms} ms)`);
  t.equal(h.store.openScans, 0, 'the store scan was closed');
  socket.resume();
  await closed;
  const next = await raw(h.base, 'GET', `${TABLE}/rows?limit=2`);
  t.equal(next.status, 200, 'the slot is free for the next scan');
  t.equal(rowsOf(next.body).length, 2);
});

t.test('stallTimeoutMs: non-reading clients holding every scan slot are dropped within 1.2x of the setting', async (t) => {
  // 5 s: large against the scheduling noise of a loaded 2-core machine (timers late by 100s of ms),
  // so the 1.2x bound (6 s) tests the mechanism, not the machine. Node's own socket timeout, which
  // this used to rely on, dropped such clients at about 2x (10.4 s).
  const stallMs = 5000;
  const h = await startGateway({ limits: { stallTimeoutMs: stallMs, maxScans: 2 } });
  t.teardown(() => h.close());
  await fillSampleTable(h);
  const sockets = await Promise.all([open(h.base), open(h.base)]);
  t.teardown(() => sockets.forEach((s) => s.destroy()));
  const started = performance.now();
  // A limit keeps each scan on the request's thread (a whole-table export starts worker threads,
  // seconds on a loaded machine before the first byte). Each client reads its first bytes, which
  // tells when output began, then never reads again: the server's writes fill the socket buffers
  // and stop. The stall clock cannot start before that first byte was sent.
  const firstBytes = sockets.map((socket) => {
    socket.on('error', () => undefined);
    const first = once(socket, 'data').then(() => {
      socket.pause();
      return performance.now();
    });
    socket.write(`GET ${TABLE}/rows?limit=1000000 HTTP/1.1\r\nHost: x\r\n\r\n`);
    return first;
  });
  const output = await Promise.race([Promise.all(firstBytes), delay(10_000, undefined, { ref: false }).then(() => [] as number[])]);
  t.equal(output.length, 2, `both scans started sending (after ${output.map((ms) => Math.round(ms - started)).join(' and ')} ms)`);
  t.equal(h.gateway.context.scans.active, 2, 'both scans are running');
  const busy = await raw(h.base, 'GET', `${TABLE}/rows?limit=1`);
  t.equal(busy.status, 503, 'every scan slot is held');
  const [from, to] = [Math.min(...output), Math.max(...output)];
  // When each scan is dropped (scans.active falling to 1, then 0), polled every 20 ms, for at most 3x the setting.
  const dropped: number[] = [];
  while (dropped.length < 2 && performance.now() - to < 3 * stallMs) {
    await delay(20);
    const now = performance.now();
    while (dropped.length < 2 - h.gateway.context.scans.active) dropped.push(now);
  }
  t.equal(dropped.length, 2, `both stalled scans were dropped (${dropped.map((ms) => Math.round(ms - from)).join(' and ')} ms after output began)`);
  for (const at of dropped) {
    t.ok(at - from >= stallMs - 50, `not before the stall timeout (${Math.round(at - from)} ms)`);
    t.ok(at - to <= 1.2 * stallMs, `within 1.2x of stallTimeoutMs ${stallMs} (${Math.round(at - to)} ms)`);
  }
  t.equal(h.store.openScans, 0, 'the store scans were closed');
  const next = await raw(h.base, 'GET', `${TABLE}/rows?limit=2`);
  t.equal(next.status, 200, 'the slots are free for the next scan');
});

t.test('a scan client that keeps reading is not a stall, though its output is never all taken', async (t) => {
  // The gateway sees a client read when its socket takes more of the response, which on Linux
  // happens once about a third of the kernel's send buffer has drained (~1.4 MB on loopback,
  // measured): a client reading 2 MiB every 0.3x the setting shows progress well within each
  // period, yet never empties the queue (it reads 20 MiB of ~40 MB).
  const stallMs = 2000;
  const h = await startGateway({ limits: { stallTimeoutMs: stallMs, maxScans: 1 } });
  t.teardown(() => h.close());
  await fillSampleTable(h);
  const socket = await open(h.base);
  t.teardown(() => socket.destroy());
  socket.on('error', () => undefined);
  socket.pause();
  socket.write(`GET ${TABLE}/rows?limit=1000000 HTTP/1.1\r\nHost: x\r\n\r\n`);
  let bytes = 0;
  for (let round = 0; round < 10; round++) {
    await delay(0.3 * stallMs);
    let got = 0;
    for (let reads = 0; reads < 500 && got < 2 * 1024 * 1024; reads++) {
      const chunk = socket.read() as Buffer | null;
      if (chunk === null) await delay(1);
      else got += chunk.length;
    }
    bytes += got;
    if (h.gateway.context.scans.active === 0) break;
  }
  t.ok(bytes > 10 * 1024 * 1024, `the client read ${bytes} bytes over ${10 * 0.3 * stallMs} ms`);
  t.equal(h.gateway.context.scans.active, 1, 'the reading client still has its scan');
});

t.test('a response that is quiet with nothing to send is not a stall', async (t) => {
  // The store looking for the next row (a wildcard scan skipping many rows) leaves the socket
  // quiet with no output waiting: that must not be taken for a client that stopped reading.
  const server = createServer((_req, res) => {
    let dropped = false;
    dropWhenStalled(res, 100, () => (dropped = true));
    res.writeHead(200, { 'content-type': 'text/plain' });
    res.write('first\r\n');
    setTimeout(() => res.end(dropped ? 'dropped\r\n' : 'second\r\n'), 500);
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  t.teardown(() => server.close());
  const { port } = server.address() as { port: number };
  const res = await raw(`http://127.0.0.1:${port}`, 'GET', '/');
  t.equal(res.body, 'first\r\nsecond\r\n', 'the whole response arrived');
});
