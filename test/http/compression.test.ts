// Response compression: gzip and br when the client accepts it and `compression: true`,
// never otherwise; compressed rows decode to exactly the uncompressed bytes.
import t from 'tap';
import { request as httpRequest } from 'node:http';
import { brotliDecompressSync, gunzipSync } from 'node:zlib';
import { negotiateEncoding } from '../../lib/http/compression.js';
import { json, raw, startGateway, type Harness } from './harness.js';

const ROWS = '/v1/instances/default/tables/sample_table/rows';

function getBytes(base: string, path: string, headers: Record<string, string>): Promise<{ status: number; headers: Record<string, unknown>; body: Buffer }> {
  const url = new URL(base);
  return new Promise((resolve, reject) => {
    httpRequest({ host: url.hostname, port: url.port, path, headers }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks) }));
    })
      .on('error', reject)
      .end();
  });
}

async function seed(h: Harness): Promise<void> {
  const rows = [];
  for (let i = 0; i < 300; i++) {
    rows.push({ entityId: [i], cells: { group_family: { string_qualifier: [{ timestamp: 1000 + i, value: `row ${i}\r\nline` }], long_qualifier: [{ timestamp: 5, value: i }] }, strings: { [`q${i % 7}`]: [{ timestamp: 9, value: 'x' }] } } });
  }
  const r = await raw(h.base, 'POST', ROWS, JSON.stringify(rows), json);
  if (r.status !== 200) throw new Error(r.body);
}

t.test('negotiation', async (t) => {
  const req = (v?: string) => ({ headers: v === undefined ? {} : { 'accept-encoding': v } }) as never;
  t.equal(negotiateEncoding(req('gzip'), false), undefined, 'off: never');
  t.equal(negotiateEncoding(req(), true), undefined);
  t.equal(negotiateEncoding(req('identity'), true), undefined);
  t.equal(negotiateEncoding(req('gzip, deflate'), true), 'gzip');
  t.equal(negotiateEncoding(req('gzip, deflate, br'), true), 'br');
  t.equal(negotiateEncoding(req('br;q=0.5, gzip'), true), 'gzip');
  t.equal(negotiateEncoding(req('br;q=0, gzip;q=0'), true), undefined);
  t.equal(negotiateEncoding(req('*'), true), 'br');
  t.equal(negotiateEncoding(req('*;q=0.1, gzip;q=0'), true), 'br');
});

t.test('compression on: scans and gets are compressed per Accept-Encoding', async (t) => {
  const h = await startGateway({ compression: true });
  t.teardown(() => h.close());
  await seed(h);
  const plain = await getBytes(h.base, `${ROWS}?limit=-1`, {});
  t.equal(plain.status, 200);
  t.equal(plain.headers['content-encoding'], undefined, 'no Accept-Encoding: identity');
  t.equal(plain.body.toString('utf8').split('\r\n').length, 301);

  const gz = await getBytes(h.base, `${ROWS}?limit=-1`, { 'accept-encoding': 'gzip' });
  t.equal(gz.headers['content-encoding'], 'gzip');
  t.match(String(gz.headers.vary), /Accept-Encoding/);
  t.ok(gz.body.length < plain.body.length, 'smaller');
  t.same(gunzipSync(gz.body), plain.body, 'gzip decodes to the same rows');

  const br = await getBytes(h.base, `${ROWS}?limit=-1`, { 'accept-encoding': 'gzip, br' });
  t.equal(br.headers['content-encoding'], 'br');
  t.same(brotliDecompressSync(br.body), plain.body, 'br decodes to the same rows');

  const one = `${ROWS}?eid=${encodeURIComponent('[7]')}`;
  const onePlain = await getBytes(h.base, one, {});
  const oneGz = await getBytes(h.base, one, { 'accept-encoding': 'gzip' });
  t.equal(oneGz.headers['content-encoding'], 'gzip');
  t.same(gunzipSync(oneGz.body), onePlain.body, 'point get compressed too');

});

t.test('compression off (default): identity whatever the client accepts', async (t) => {
  const h = await startGateway();
  t.teardown(() => h.close());
  await seed(h);
  const r = await getBytes(h.base, `${ROWS}?limit=-1`, { 'accept-encoding': 'gzip, br' });
  t.equal(r.status, 200);
  t.equal(r.headers['content-encoding'], undefined);
  t.equal(r.body.toString('utf8').split('\r\n').length, 301);
});
