/**
 * The answer of a POST: its targets kept compactly and written in pieces give exactly the text one
 * JSON.stringify of the list would (the length announced included), for any number of targets and
 * any characters; a large answer reaches the client whole, compressed or not.
 */
import { gunzipSync } from 'node:zlib';
import { request as httpRequest } from 'node:http';
import t from 'tap';
import { PostTargets } from '../../lib/http/post-targets.js';
import { json, startGateway } from './harness.js';

const PREFIX = '/v1/instances/default/tables/t/rows';

t.test('pieces and byteLength match JSON.stringify', async (t) => {
  for (const count of [0, 1, 2, 1023, 1024, 1025, 2048, 5000]) {
    for (const suffix of [(i: number) => `?eid=%5B${i}%5D`, (i: number) => `?eid=['é😀${i}', "q\\"\n"]`, (i: number) => `/${i.toString(16)}`]) {
      const list: string[] = [];
      const targets = new PostTargets(PREFIX);
      for (let i = 0; i < count; i++) {
        list.push(PREFIX + suffix(i));
        targets.add(PREFIX + suffix(i));
      }
      const expected = JSON.stringify({ targets: list });
      t.equal([...targets.pieces()].join(''), expected, `${count} targets`);
      t.equal(targets.byteLength(), Buffer.byteLength(expected), `${count} targets: byte length`);
      t.equal(targets.small, count <= 1024);
    }
  }
  t.throws(() => new PostTargets(PREFIX).add('/v1/elsewhere'), /does not start with/);
});

function post(base: string, body: string, headers: Record<string, string>): Promise<{ status: number; headers: Record<string, unknown>; body: Buffer }> {
  const url = new URL(base);
  return new Promise((resolve, reject) => {
    const req = httpRequest({ host: url.hostname, port: url.port, method: 'POST', path: '/v1/instances/default/tables/sample_table/rows', headers }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks) }));
    });
    req.on('error', reject);
    req.end(body);
  });
}

t.test('a large answer, plain and compressed', async (t) => {
  const h = await startGateway({ compression: true });
  t.teardown(() => h.close());
  const rows = Array.from({ length: 3000 }, (_, i) => ({ entityId: [i], cells: { strings: { a: [{ value: 'x', timestamp: 1 }] } } }));
  const expected = rows.map((_, i) => `/v1/instances/default/tables/sample_table/rows?eid=${encodeURIComponent(`[${i}]`)}`);
  const plain = await post(h.base, JSON.stringify(rows), json);
  t.equal(plain.status, 200);
  t.equal(plain.headers['content-length'], String(plain.body.length), 'its Content-Length');
  t.same(JSON.parse(plain.body.toString()), { targets: expected });
  const gzip = await post(h.base, JSON.stringify(rows), { ...json, 'accept-encoding': 'gzip' });
  t.equal(gzip.status, 200);
  t.equal(gzip.headers['content-encoding'], 'gzip');
  t.same(JSON.parse(gunzipSync(gzip.body).toString()), { targets: expected });
});
