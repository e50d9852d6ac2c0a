/**
 * Regression: an error answered while node is still in the request event (before it marks a
 * bodyless request complete) closed the kept-alive connection, since sendError took every
 * incomplete request for one whose body was left unread. A GET answered with a 4xx at once (a
 * bad parameter, a bad entity id, too many eids) must keep its connection; a request whose body
 * is left unread must still close it.
 */
import { Agent, request } from 'node:http';
import t from 'tap';
import { startGateway } from './harness.js';

const TABLE = '/v1/instances/default/tables/sample_table';

t.test('4xx answers to bodyless GETs keep the connection; an unread body closes it', async (t) => {
  const h = await startGateway({ limits: { maxEids: 2 } });
  t.teardown(() => h.close());
  const agent = new Agent({ keepAlive: true, maxSockets: 1 });
  t.teardown(() => agent.destroy());
  const sockets = new Set<unknown>();
  const send = (method: string, path: string, body?: string) =>
    new Promise<{ status: number; connection: string | undefined }>((resolve, reject) => {
      const req = request(`${h.base}${path}`, { agent, method, headers: body === undefined ? {} : { 'content-type': 'application/json' } }, (res) => {
        sockets.add(res.socket);
        res.resume();
        res.on('end', () => resolve({ status: res.statusCode ?? 0, connection: res.headers.connection }));
      });
      req.on('error', reject);
      req.end(body);
    });
  for (const [what, path] of [
    ['an unknown parameter', `${TABLE}/rows?eid=[1]&bogus=1`],
    ['a bad entity id', `${TABLE}/rows?eid=[1`],
    ['too many eids', `${TABLE}/rows?eids=[[1],[2],[3]]`],
    ['an unknown route', '/v1/nothing'],
  ]) {
    const got = await send('GET', path!);
    t.equal(got.status >= 400 && got.status < 500, true, `${what}: ${got.status}`);
    t.not(got.connection, 'close', `${what}: the connection stays open`);
  }
  t.equal((await send('GET', `${TABLE}/rows?eid=[1]`)).status, 200);
  t.equal(sockets.size, 1, 'every request went over the one kept-alive connection');
  // A POST refused before its body is read (a parameter the route does not take).
  const refused = await send('POST', `${TABLE}/rows?bogus=1`, JSON.stringify({ entityId: [1], cells: {} }));
  t.equal(refused.status, 400);
  t.equal(refused.connection, 'close', 'a request whose body was not read closes its connection');
});
