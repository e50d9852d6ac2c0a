/**
 * Graceful close: running requests finish, new connections are refused, and a kept-alive client
 * does not hold the shutdown for the whole shutdownGraceMs.
 */
import { Agent, request } from 'node:http';
import { connect } from 'node:net';
import { once } from 'node:events';
import t from 'tap';
import { encodeRowKey } from '../../lib/model/row-key.js';
import type { RowWrite } from '../../lib/model/types.js';
import { startGateway } from './harness.js';

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
  const layout = await h.store.getLayout('default', 'sample_table');
  const value = JSON.stringify('v'.repeat(1000));
  const rows: RowWrite[] = [];
  for (let i = 0; i < 20_000; i++) {
    rows.push({
      rowKey: encodeRowKey(layout.keyFormat, [BigInt(i)]),
      cells: [{ kind: 'value', family: 'strings', qualifier: 'q', timestamp: 1, schemaId: 0, json: value }],
    });
  }
  await h.store.write('default', 'sample_table', rows);
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
