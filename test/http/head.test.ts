/**
 * HEAD is served wherever GET is (RFC 9110 9.3.2): the GET's status and headers, no body, on every
 * revision's GET routes; a scan is validated but not run (no store scan, no maxScans slot); a
 * kept-alive connection stays in step; `Allow` lists HEAD; read scope and read-only mode allow it.
 */
import { once } from 'node:events';
import { connect } from 'node:net';
import { setTimeout as delay } from 'node:timers/promises';
import t, { type Test } from 'tap';
import { sha256Hex } from '../../lib/http/auth.js';
import type { Store } from '../../lib/store/store.js';
import { INFO_PATHS, json, raw, startGateway, type RawResponse } from './harness.js';

const ROWS = '/v1/instances/default/tables/sample_table/rows';
const q = (v: unknown) => encodeURIComponent(typeof v === 'string' ? v : JSON.stringify(v));

/** Counts the store's scans (both kinds), calling through. */
function countScans(store: Store): { scans: number } {
  const seen = { scans: 0 };
  const target = store as unknown as Record<string, (...args: unknown[]) => unknown>;
  for (const name of ['scan', 'scanChunks']) {
    const method = target[name];
    if (typeof method !== 'function') continue;
    target[name] = (...args: unknown[]) => {
      seen.scans++;
      return method.apply(store, args);
    };
  }
  return seen;
}

/** Headers that must be the same for HEAD and GET (Transfer-Encoding frames a body a HEAD lacks). */
const comparable = (res: RawResponse) =>
  Object.fromEntries(Object.entries(res.headers).filter(([name]) => name !== 'date' && name !== 'transfer-encoding' && name !== 'x-request-id'));

async function sameAsGet(t: Test, base: string, path: string, headers: Record<string, string> = {}): Promise<RawResponse> {
  const get = await raw(base, 'GET', path, undefined, headers);
  const head = await raw(base, 'HEAD', path, undefined, headers);
  t.equal(head.status, get.status, `HEAD ${path}: the GET's status ${get.status}`);
  t.same(comparable(head), comparable(get), `HEAD ${path}: the GET's headers`);
  t.equal(head.body, '', `HEAD ${path}: no body`);
  return head;
}

t.test("HEAD answers with the GET's status and headers on every kind of GET, errors included", async (t) => {
  const h = await startGateway();
  t.teardown(() => h.close());
  const rows = [1, 2, 3].map((i) => ({ entityId: [i], cells: { strings: { q: [{ value: `v${i}`, timestamp: 1 }] } } }));
  t.equal((await raw(h.base, 'POST', ROWS, JSON.stringify(rows), json)).status, 200);
  for (const path of INFO_PATHS) {
    await sameAsGet(t, h.base, path);
  }
  const point = await sameAsGet(t, h.base, `${ROWS}?eid=${q([2])}`);
  t.ok(Number(point.headers['content-length']) > 0, "a point get: the GET's Content-Length");
  await sameAsGet(t, h.base, `${ROWS}?eids=${q([[1], [3]])}`);
  await sameAsGet(t, h.base, `${ROWS}?limit=2`);
  for (const [path, status] of [
    [`${ROWS}?cols=nofamily`, 400],
    [`${ROWS}?limit=-7`, 400],
    ['/v1/instances/default/tables/nope/rows', 404],
    ['/v1/instances/nope', 404],
    ['/v1?x=1', 400],
    ['/v1/nothing', 404],
  ] as const) {
    const res = await sameAsGet(t, h.base, path);
    t.equal(res.status, status, `HEAD ${path}: ${status}`);
    t.ok(Number(res.headers['content-length']) > 0, `HEAD ${path}: the length of the error body it does not send`);
  }
});

t.test('HEAD of a scan runs no scan and takes no maxScans slot', async (t) => {
  const h = await startGateway({ limits: { maxScans: 1 } });
  t.teardown(() => h.close());
  const counted = countScans(h.store);
  t.equal((await raw(h.base, 'GET', `${ROWS}?limit=5`)).status, 200);
  t.equal(counted.scans, 1, 'a GET scan runs a store scan (the counter sees it)');
  for (const path of [
    `${ROWS}?limit=5`,
    `${ROWS}?limit=-1`,
    `${ROWS}?start_eid=${q([5])}`,
    `/v1/instances/default/tables/players/rows?eid=${q(['ann', []])}`,
  ]) {
    const head = await raw(h.base, 'HEAD', path);
    t.equal(head.status, 200, `HEAD ${path}`);
    t.equal(head.headers['content-type'], 'application/json');
  }
  t.equal(counted.scans, 1, 'no HEAD ran a store scan');
  t.equal(h.store.openScans, 0);
  h.gateway.context.scans.active = 1; // every slot held
  t.equal((await raw(h.base, 'GET', `${ROWS}?limit=5`)).status, 503, 'GET: no slot');
  t.equal((await raw(h.base, 'HEAD', `${ROWS}?limit=5`)).status, 200, 'HEAD needs none');
  t.equal((await raw(h.base, 'HEAD', `${ROWS}?limit=5&start_eid=${q('[not json')}`)).status, 400, 'but validates as GET does');
  h.gateway.context.scans.active = 0;
});

t.test('HEAD on a kept-alive connection: no body bytes, the next response follows in step', async (t) => {
  const h = await startGateway();
  t.teardown(() => h.close());
  const url = new URL(h.base);
  const socket = connect(Number(url.port), url.hostname);
  await once(socket, 'connect');
  t.teardown(() => socket.destroy());
  let received = '';
  socket.on('data', (b: Buffer) => (received += b.toString('latin1')));
  socket.write(`HEAD ${ROWS}?limit=5 HTTP/1.1\r\nHost: x\r\n\r\nHEAD /v1 HTTP/1.1\r\nHost: x\r\n\r\nGET /v1 HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n`);
  for (let i = 0; i < 200 && !socket.readableEnded; i++) await delay(10);
  const heads = received.split('HTTP/1.1 ').slice(1);
  t.equal(heads.length, 3, 'three responses');
  t.ok(heads[0]?.endsWith('\r\n\r\n'), 'the scan HEAD: a head and nothing else');
  t.ok(heads[1]?.endsWith('\r\n\r\n'), 'the HEAD of /v1: a head and nothing else');
  t.match(heads[1], /content-length: \d+/i);
  t.match(heads[2], /^200 OK\r\n[^]*\r\n\r\n\{"resources":/, 'the GET after them gets its body');
});

t.test('Allow lists HEAD; HEAD is a read for tokens and in read-only mode', async (t) => {
  const token = 'reader-token';
  const h = await startGateway({ auth: { tokens: [{ name: 'reader', sha256: sha256Hex(token), scopes: { default: 'read' } }] } });
  t.teardown(() => h.close());
  const bearer = { authorization: `Bearer ${token}` };
  const put = await raw(h.base, 'PUT', ROWS, '{}', { ...json, ...bearer });
  t.equal(put.status, 405);
  t.equal(put.headers.allow, 'GET, HEAD, POST, DELETE');
  t.equal((await raw(h.base, 'PATCH', '/v1', undefined, bearer)).headers.allow, 'GET, HEAD');
  t.equal((await raw(h.base, 'HEAD', `${ROWS}?limit=1`, undefined, bearer)).status, 200, 'read scope suffices');
  t.equal((await raw(h.base, 'HEAD', `${ROWS}?limit=1`)).status, 401, 'no token: 401 as for GET');
  const ro = await startGateway({ readOnly: true });
  t.teardown(() => ro.close());
  t.equal((await raw(ro.base, 'HEAD', `${ROWS}?limit=1`)).status, 200, 'read-only mode allows HEAD');
});

t.test("HEAD with compression: the GET's Content-Encoding and Vary", async (t) => {
  const h = await startGateway({ compression: true });
  t.teardown(() => h.close());
  const gzip = { 'accept-encoding': 'gzip' };
  const scan = await sameAsGet(t, h.base, `${ROWS}?limit=5`, gzip);
  t.equal(scan.headers['content-encoding'], 'gzip');
  t.equal(scan.headers.vary, 'Accept-Encoding');
  const doc = await sameAsGet(t, h.base, '/v1/openapi.json', gzip);
  t.equal(doc.headers['content-encoding'], 'gzip', 'a large document: compressed on GET, so named on HEAD');
});
