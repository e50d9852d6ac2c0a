/**
 * POST rows: the content type and coding (415) and the declared Content-Length (413) are judged
 * from the request head before any store call, so such a request costs the store nothing and its status
 * does not depend on whether the instance or table exists.
 */
import { request as httpRequest } from 'node:http';
import { gzipSync } from 'node:zlib';
import t from 'tap';
import type { Store } from '../../lib/store/store.js';
import { json, raw, startGateway } from './harness.js';

const LIMIT = 1000;
/** A valid row of `revision` (entity ids of revisions 1 and 2 are shell strings). */
const row = (revision: number, i: number) => ({ entityId: revision === 3 ? [i] : `[${i}]`, cells: { strings: { a: [{ timestamp: 1, value: 'v' }] } } });

/** Counts every store method call (installed before the gateway first uses the store). */
function countStoreCalls(store: Store): { calls: string[] } {
  const seen = { calls: [] as string[] };
  const target = store as unknown as Record<string, unknown>;
  const wrapped = new Set<string>();
  for (let o = store as object | null; o && o !== Object.prototype; o = Object.getPrototypeOf(o) as object | null) {
    for (const name of Object.getOwnPropertyNames(o)) {
      const d = Object.getOwnPropertyDescriptor(o, name);
      if (name === 'constructor' || typeof d?.value !== 'function' || wrapped.has(name)) continue;
      wrapped.add(name);
      const method = d.value as (...args: unknown[]) => unknown;
      target[name] = (...args: unknown[]) => {
        seen.calls.push(name);
        return method.apply(store, args);
      };
    }
  }
  if (!wrapped.has('getLayout') || !wrapped.has('write')) throw new Error('store methods not found');
  return seen;
}

/** A POST whose body is sent chunked (no Content-Length). */
function postChunked(
  base: string,
  path: string,
  body: string | Buffer,
  headers: Record<string, string> = {},
): Promise<{ status: number; headers: Record<string, unknown>; body: string }> {
  const url = new URL(base);
  return new Promise((resolve, reject) => {
    const req = httpRequest(
      { host: url.hostname, port: url.port, method: 'POST', path, headers: { ...json, 'transfer-encoding': 'chunked', ...headers } },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks).toString('utf8') }));
      },
    );
    req.on('error', reject);
    for (let i = 0; i < body.length; i += 100) req.write(body.slice(i, i + 100));
    req.end();
  });
}

const TARGETS = [
  ['an existing table', '/v1/instances/default/tables/sample_table/rows'],
  ['a missing table', '/v1/instances/default/tables/no_such_table/rows'],
  ['a missing instance', '/v1/instances/no_such_instance/tables/t/rows'],
] as const;

for (const revision of [1, 2, 3]) {
  t.test(`revision ${revision}: 415 and a declared 413 come before any store call, whatever the target`, async (t) => {
    const h = await startGateway({ revision, limits: { bodyBytes: LIMIT } });
    t.teardown(() => h.close());
    const store = countStoreCalls(h.store);
    const ROW = row(revision, 1);
    /** A valid body larger than LIMIT. */
    const BIG = JSON.stringify(Array.from({ length: 40 }, (_, i) => row(revision, i)));
    for (const [what, path] of TARGETS) {
      for (const type of ['text/plain', 'application/x-www-form-urlencoded', undefined]) {
        const res = await raw(h.base, 'POST', path, JSON.stringify(ROW), type === undefined ? {} : { 'content-type': type });
        t.equal(res.status, 415, `${type ?? 'no content type'} to ${what}: ${res.body}`);
        t.equal(JSON.parse(res.body).code, 'RG_ERR_UNSUPPORTED_MEDIA_TYPE');
      }
      const big = await raw(h.base, 'POST', path, BIG, json);
      t.equal(big.status, 413, `a declared ${BIG.length} bytes to ${what}: ${big.body}`);
      t.equal(JSON.parse(big.body).code, 'RG_ERR_BODY_TOO_LARGE');
      t.equal(big.headers.connection, 'close', 'the unread body closes the connection');
      // Both wrong: the content type is judged first.
      const both = await raw(h.base, 'POST', path, BIG, { 'content-type': 'text/plain' });
      t.equal(both.status, 415, `wrong type and too large to ${what}`);
    }
    // A body with a content coding: 415 naming it (it was read as raw bytes and refused as "not
    // valid UTF-8"), with the coding that would be taken.
    const gzipped = gzipSync(JSON.stringify(ROW));
    for (const [what, path] of TARGETS) {
      for (const [coding, named] of [
        ['gzip', 'gzip'],
        ['x-gzip', 'x-gzip'],
        ['deflate', 'deflate'],
        ['br', 'br'],
        ['GZip', 'gzip'],
        ['identity, gzip', 'gzip'],
        ['gzip,deflate', 'gzip, deflate'],
      ]) {
        for (const chunked of [false, true]) {
          const res = chunked
            ? await postChunked(h.base, path, gzipped, { 'content-encoding': coding })
            : await raw(h.base, 'POST', path, gzipped, { ...json, 'content-encoding': coding });
          const how = `Content-Encoding: ${coding}${chunked ? ', chunked' : ''} to ${what}`;
          t.equal(res.status, 415, `${how}: ${res.body}`);
          t.same(
            JSON.parse(res.body),
            {
              exceptionName: 'UnsupportedMediaTypeException',
              exception: `request body is sent with Content-Encoding "${named}": bodies are read as sent, without a content coding (send the JSON uncompressed)`,
              status: 415,
              code: 'RG_ERR_UNSUPPORTED_CONTENT_ENCODING',
            },
            how,
          );
          t.equal(res.headers['accept-encoding'], 'identity', `${how}: what would be taken`);
        }
      }
    }
    t.same(store.calls, [], 'the store was not called');
    t.equal((await raw(h.base, 'GET', `${TARGETS[0][1]}?limit=-1`)).body, '', 'nothing was written');
    // identity (or an empty header) is no coding: the body is taken.
    for (const coding of ['identity', 'Identity', '']) {
      const res = await raw(h.base, 'POST', TARGETS[0][1], JSON.stringify(ROW), { ...json, 'content-encoding': coding });
      t.equal(res.status, 200, `Content-Encoding: ${JSON.stringify(coding)}: ${res.body}`);
    }

    // A well-formed request reaches the store: 404 for a missing table or instance.
    t.equal((await raw(h.base, 'POST', TARGETS[1][1], JSON.stringify(ROW), json)).status, 404, 'a missing table is a 404 once the request itself is fine');
    t.equal((await raw(h.base, 'POST', TARGETS[2][1], JSON.stringify(ROW), json)).status, 404, 'a missing instance too');
    // Without a declared length the limit is enforced while the body is read (after the lookup).
    const chunked = await postChunked(h.base, TARGETS[0][1], BIG);
    t.equal(chunked.status, 413, `a chunked body over the limit: ${chunked.body}`);
  });
}
