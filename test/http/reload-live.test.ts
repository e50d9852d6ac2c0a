/**
 * Gateway.reload over real sockets, for the settings cli/reload.test.ts does not drive by signal:
 * CORS, limits (maxEids, and node's timeouts on the server), visible instances, compression; a
 * kept-alive connection opened before the reload serves the next request under the new settings.
 */
import { Agent, request } from 'node:http';
import t from 'tap';
import { buildConfig } from '../../lib/config/config.js';
import { planReload } from '../../lib/config/config-reload.js';
import { startGateway } from './harness.js';

const TABLE = '/v1/instances/default/tables/sample_table';

t.test('CORS, limits, instances and compression change live on a kept-alive connection', async (t) => {
  const h = await startGateway({ cors: false });
  t.teardown(() => h.close());
  const agent = new Agent({ keepAlive: true, maxSockets: 1 });
  t.teardown(() => agent.destroy());
  const sockets = new Set<unknown>();
  const get = (path: string, headers: Record<string, string> = {}) =>
    new Promise<{ status: number; headers: Record<string, unknown> }>((resolve, reject) => {
      const req = request(`${h.base}${path}`, { agent, headers }, (res) => {
        sockets.add(res.socket);
        res.resume();
        res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers }));
      });
      req.on('error', reject);
      req.end();
    });
  const origin = { origin: 'https://app.example' };
  const before = await get(`${TABLE}/rows?eids=[[1],[2],[3]]`, origin);
  t.equal(before.status, 200);
  t.equal(before.headers['access-control-allow-origin'], undefined, 'no CORS before');
  t.equal((await get('/v1/instances/hidden')).status, 200, 'instance hidden is visible before');

  const running = h.gateway.context.config;
  const next = buildConfig({
    port: 0,
    host: '127.0.0.1',
    cors: { origins: ['https://app.example'] },
    limits: { maxEids: 2, headersTimeoutMs: 2000, requestTimeoutMs: 4000, keepAliveTimeoutMs: 3000 },
    instances: ['default'],
    compression: true,
  });
  const plan = planReload(running, next);
  t.same(plan.changed, ['cors', 'limits', 'instances', 'compression']);
  t.same(plan.ignored, [], 'port 0 and host are the same');
  h.gateway.reload(plan.config);

  const after = await get(`${TABLE}/rows?eids=[[1],[2],[3]]`, origin);
  t.equal(after.status, 400, 'maxEids 2 applies');
  t.equal(after.headers['access-control-allow-origin'], 'https://app.example', 'the allow-list applies');
  t.equal((await get('/v1/instances/hidden')).status, 404, 'instances applies');
  const big = await get(`${TABLE}/rows?eids=[[1],[2]]`, { 'accept-encoding': 'gzip' });
  t.match(big.headers.vary, /Accept-Encoding/, 'compression applies');
  t.equal(sockets.size, 1, 'every request went over the one kept-alive connection');
  t.same([h.gateway.server.headersTimeout, h.gateway.server.requestTimeout, h.gateway.server.keepAliveTimeout], [2000, 4000, 3000], "node's timeouts follow");
  t.equal(h.gateway.context.config.limits.maxEids, 2);
});
