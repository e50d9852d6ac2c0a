// Response compression: gzip and br when the client accepts it and `compression: true`,
// never otherwise; compressed rows and JSON documents decode to exactly the uncompressed bytes;
// bodies under ~1 KiB stay uncompressed; compressed scans are flushed per chunk.
import t from 'tap';
import { randomBytes } from 'node:crypto';
import { request as httpRequest, type ClientRequest } from 'node:http';
import { brotliDecompressSync, createBrotliDecompress, createGunzip, gunzipSync } from 'node:zlib';
import { negotiateEncoding } from '../../lib/http/compression.js';
import { COMPRESS_MIN_BYTES } from '../../lib/http/respond.js';
import { toHex } from '../../lib/model/keys/binary-text.js';
import { encodeRowKey } from '../../lib/model/keys/row-key.js';
import type { RowWrite } from '../../lib/model/types.js';
import type { Store } from '../../lib/store/store.js';
import { json, raw, startGateway, type Harness } from './harness.js';

const TABLE = '/v1/instances/default/tables/sample_table';
const ROWS = `${TABLE}/rows`;

interface BytesResponse {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: Buffer;
}

function send(base: string, method: string, path: string, headers: Record<string, string>, body?: string): Promise<BytesResponse> {
  const url = new URL(base);
  return new Promise((resolve, reject) => {
    const req = httpRequest({ host: url.hostname, port: url.port, method, path, headers }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks) }));
      res.on('error', reject);
    });
    req.on('error', reject);
    req.end(body);
  });
}

const getBytes = (base: string, path: string, headers: Record<string, string>) => send(base, 'GET', path, headers);

/** The body as the client sees it after undoing Content-Encoding. */
function decoded(r: BytesResponse): Buffer {
  const enc = r.headers['content-encoding'];
  if (enc === 'gzip') return gunzipSync(r.body);
  if (enc === 'br') return brotliDecompressSync(r.body);
  if (enc !== undefined) throw new Error(`unexpected content-encoding ${String(enc)}`);
  return r.body;
}

async function seed(h: Harness): Promise<void> {
  const rows = [];
  for (let i = 0; i < 300; i++) {
    rows.push({
      entityId: [i],
      cells: {
        group_family: { string_qualifier: [{ timestamp: 1000 + i, value: `row ${i}\r\nline` }], long_qualifier: [{ timestamp: 5, value: i }] },
        strings: { [`q${i % 7}`]: [{ timestamp: 9, value: 'x' }] },
      },
    });
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
  t.match(String(plain.headers.vary), /Accept-Encoding/, 'Vary even when not compressed: the resource has both variants');
  t.equal(plain.body.toString('utf8').split('\r\n').length, 301);

  const gz = await getBytes(h.base, `${ROWS}?limit=-1`, { 'accept-encoding': 'gzip' });
  t.equal(gz.headers['content-encoding'], 'gzip');
  t.match(String(gz.headers.vary), /Accept-Encoding/);
  t.ok(gz.body.length < plain.body.length, 'smaller');
  t.same(gunzipSync(gz.body), plain.body, 'gzip decodes to the same rows');

  const br = await getBytes(h.base, `${ROWS}?limit=-1`, { 'accept-encoding': 'gzip, br' });
  t.equal(br.headers['content-encoding'], 'br');
  t.same(brotliDecompressSync(br.body), plain.body, 'br decodes to the same rows');

  // A bulk get is a complete body like any JSON document: compressed from ~1 KiB up.
  const bulk = `${ROWS}?eids=${encodeURIComponent(JSON.stringify(Array.from({ length: 20 }, (_, i) => [i])))}`;
  const bulkPlain = await getBytes(h.base, bulk, {});
  t.ok(bulkPlain.body.length >= COMPRESS_MIN_BYTES, `bulk get of ${bulkPlain.body.length} bytes`);
  t.equal(bulkPlain.headers['content-length'], String(bulkPlain.body.length));
  const bulkGz = await getBytes(h.base, bulk, { 'accept-encoding': 'gzip' });
  t.equal(bulkGz.headers['content-encoding'], 'gzip');
  t.equal(bulkGz.headers['content-length'], undefined, 'no Content-Length of the uncompressed body on a compressed one');
  t.same(gunzipSync(bulkGz.body), bulkPlain.body, 'bulk get compressed too');

  const one = `${ROWS}?eid=${encodeURIComponent('[7]')}`;
  const onePlain = await getBytes(h.base, one, {});
  t.ok(onePlain.body.length < COMPRESS_MIN_BYTES);
  const oneGz = await getBytes(h.base, one, { 'accept-encoding': 'gzip' });
  t.equal(oneGz.headers['content-encoding'], undefined, `a point get of ${onePlain.body.length} bytes stays uncompressed`);
  t.same(oneGz.body, onePlain.body);
  t.equal(oneGz.headers['content-length'], String(oneGz.body.length));
});

t.test('compression on: every JSON document from ~1 KiB up is compressed, and decodes to the same JSON', async (t) => {
  const h = await startGateway({ compression: true, cors: { origins: ['https://app.example'] } });
  t.teardown(() => h.close());
  await seed(h);
  const documents = [
    '/v1/openapi.json',
    TABLE, // the layout
    '/v1/instances/default', // instance metadata
  ];
  for (const path of documents) {
    const plain = await getBytes(h.base, path, {});
    t.equal(plain.status, 200, path);
    t.ok(plain.body.length >= COMPRESS_MIN_BYTES, `${path}: ${plain.body.length} bytes, enough to compress`);
    t.equal(plain.headers['content-encoding'], undefined, `${path}: identity without Accept-Encoding`);
    t.equal(plain.headers['content-length'], String(plain.body.length), `${path}: Content-Length of the body sent`);
    const expected = JSON.parse(plain.body.toString('utf8')) as unknown;
    for (const [accept, encoding] of [
      ['gzip', 'gzip'],
      ['br', 'br'],
      ['gzip;q=0.5, br;q=0.9', 'br'],
      ['deflate, gzip', 'gzip'],
    ] as const) {
      const r = await getBytes(h.base, path, { 'accept-encoding': accept });
      t.equal(r.status, 200);
      t.equal(r.headers['content-encoding'], encoding, `${path} with Accept-Encoding: ${accept}`);
      t.equal(r.headers['content-type'], 'application/json');
      t.equal(r.headers['content-length'], undefined, `${path}: no Content-Length on a compressed body (it is chunked)`);
      t.match(String(r.headers.vary), /Accept-Encoding/);
      t.ok(r.body.length < plain.body.length, `${path}: ${r.body.length} < ${plain.body.length} bytes`);
      t.same(JSON.parse(decoded(r).toString('utf8')), expected, `${path} (${encoding}) decodes to the same JSON`);
      t.same(decoded(r), plain.body, 'byte for byte');
    }
  }

  // CORS's Vary: Origin is kept.
  const withOrigin = await getBytes(h.base, '/v1/openapi.json', { 'accept-encoding': 'gzip', origin: 'https://app.example' });
  t.equal(withOrigin.headers['content-encoding'], 'gzip');
  t.equal(withOrigin.headers.vary, 'Origin, Accept-Encoding');

  // Small bodies stay uncompressed (nothing to gain), with a correct Content-Length.
  for (const path of ['/v1', '/v1/version', '/v1/instances', '/v1/instances/default/tables', `${TABLE}/nope`]) {
    const r = await getBytes(h.base, path, { 'accept-encoding': 'gzip, br' });
    t.ok(r.body.length < COMPRESS_MIN_BYTES, `${path}: ${r.body.length} bytes`);
    t.equal(r.headers['content-encoding'], undefined, `${path}: small, not compressed`);
    t.equal(r.headers['content-length'], String(r.body.length), `${path}: Content-Length matches`);
    t.match(String(r.headers.vary), /Accept-Encoding/);
    JSON.parse(r.body.toString('utf8'));
  }

  // POST targets.
  const rows = Array.from({ length: 100 }, (_, i) => ({ entityId: [1000 + i], cells: { strings: { a: [{ timestamp: 1, value: 'v' }] } } }));
  const post = await send(h.base, 'POST', ROWS, { ...json, 'accept-encoding': 'gzip' }, JSON.stringify(rows));
  t.equal(post.status, 200);
  t.equal(post.headers['content-encoding'], 'gzip', 'POST targets compressed');
  const targets = JSON.parse(decoded(post).toString('utf8')) as { targets: string[] };
  t.equal(targets.targets.length, 100);
  const smallPost = await send(h.base, 'POST', ROWS, { ...json, 'accept-encoding': 'gzip' }, JSON.stringify(rows[0]));
  t.equal(smallPost.headers['content-encoding'], undefined, 'one target: small');
  t.equal(JSON.parse(smallPost.body.toString('utf8')).targets.length, 1);

  // An error body of ~1 KiB or more (it names the long parameter) is compressed like any other.
  const longName = 'p'.repeat(1500);
  const err = await getBytes(h.base, `/v1?${longName}=1`, { 'accept-encoding': 'br' });
  t.equal(err.status, 400);
  t.equal(err.headers['content-encoding'], 'br');
  const body = JSON.parse(decoded(err).toString('utf8')) as { code: string; exception: string };
  t.equal(body.code, 'RG_ERR_BAD_PARAMETER');
  t.ok(body.exception.includes(longName));
  const smallErr = await getBytes(h.base, '/v1?x=1', { 'accept-encoding': 'br' });
  t.equal(smallErr.status, 400);
  t.equal(smallErr.headers['content-encoding'], undefined, 'a small error is not');
});

t.test('compression on, revision 1: the single-row GET and PUT are compressed', async (t) => {
  const h = await startGateway({ compression: true, revision: 1 });
  t.teardown(() => h.close());
  const layout = await h.store.getLayout('default', 'sample_table');
  const rowKey = encodeRowKey(layout.keyFormat, [5n]);
  await h.store.write('default', 'sample_table', [
    { rowKey, cells: [{ kind: 'value', family: 'strings', qualifier: 'q', timestamp: 1, schemaId: 0, json: JSON.stringify('y'.repeat(2000)) }] },
  ]);
  const path = `${ROWS}/${toHex(rowKey)}`;
  const plain = await getBytes(h.base, path, {});
  t.equal(plain.status, 200, 'GET one row, identity');
  t.equal(plain.headers['content-length'], String(plain.body.length));
  for (const encoding of ['gzip', 'br']) {
    const r = await getBytes(h.base, path, { 'accept-encoding': encoding });
    t.equal(r.headers['content-encoding'], encoding, `GET one row, ${encoding}`);
    t.same(decoded(r), plain.body);
  }
  const put = await send(h.base, 'PUT', `${path}?timestamp=2&strings:q=${encodeURIComponent(JSON.stringify('z'.repeat(2000)))}`, { 'accept-encoding': 'gzip' });
  // Messages are text: a compressed body in a test name puts binary into tap's output.
  t.equal(put.status, 200, 'PUT one row answers 200');
  t.equal(put.headers['content-encoding'], 'gzip', 'PUT one row');
  const row = JSON.parse(decoded(put).toString('utf8')) as { cells: { strings: { q: { timestamp: number; value: string }[] } } };
  t.same(row.cells.strings.q, [{ timestamp: 2, value: 'z'.repeat(2000) }]);
});

t.test('compression off (default): identity whatever the client accepts', async (t) => {
  const h = await startGateway();
  t.teardown(() => h.close());
  await seed(h);
  const r = await getBytes(h.base, `${ROWS}?limit=-1`, { 'accept-encoding': 'gzip, br' });
  t.equal(r.status, 200);
  t.equal(r.headers['content-encoding'], undefined);
  t.equal(r.headers.vary, undefined, 'no Vary: Accept-Encoding when nothing is ever compressed');
  t.equal(r.body.toString('utf8').split('\r\n').length, 301);
  for (const path of [
    '/v1/openapi.json',
    TABLE,
    '/v1/instances/default',
    `${ROWS}?eids=${encodeURIComponent(JSON.stringify(Array.from({ length: 20 }, (_, i) => [i])))}`,
  ]) {
    const doc = await getBytes(h.base, path, { 'accept-encoding': 'gzip, br' });
    t.equal(doc.status, 200);
    t.ok(doc.body.length >= COMPRESS_MIN_BYTES);
    t.equal(doc.headers['content-encoding'], undefined, `${path}: never compressed`);
    t.equal(doc.headers.vary, undefined);
    t.equal(doc.headers['content-length'], String(doc.body.length));
    JSON.parse(doc.body.toString('utf8').split('\r\n')[0]!);
  }
});

/**
 * Compressed scans are flushed per chunk. A table whose compressed export is far larger than what
 * socket and stream buffers hold: 48,000 rows of 1,000 random base64 characters, ~48 MB of rows and
 * ~37 MB even compressed (a paused client lets the server get ~7 MB of rows ahead).
 */
const BIG_ROWS = 48_000;
const VALUE_CHARS = 1000;

interface Gate {
  /** Set: the second chunk of the next scans waits for it. */
  hold?: Promise<void>;
  /** The bytes of the first chunk of the latest scan. */
  firstChunk?: Buffer;
}

/** Wraps store.scanChunks (before the gateway first uses it) so a test can hold a scan after its first chunk. */
function gateScans(store: Store): Gate {
  const gate: Gate = {};
  const scanChunks = store.scanChunks!.bind(store);
  store.scanChunks = (instance, table, req, render) => {
    const it = scanChunks(instance, table, req, render);
    const next = it.next.bind(it);
    let calls = 0;
    it.next = async () => {
      const call = calls++;
      if (call === 1 && gate.hold) await gate.hold;
      const r = await next();
      if (call === 0 && !r.done) gate.firstChunk = Buffer.from(r.value.bytes);
      return r;
    };
    return it;
  };
  return gate;
}

/** Generous: the first chunk of a scan on the scan threads can take seconds on a loaded machine. */
async function until(what: string, ok: () => boolean, ms = 60_000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!ok()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 10));
  }
}

t.test('compressed scans are flushed per chunk', async (t) => {
  const h = await startGateway({ compression: true });
  t.teardown(() => h.close());
  const gate = gateScans(h.store);
  const layout = await h.store.getLayout('default', 'sample_table');
  const random = randomBytes((BIG_ROWS * VALUE_CHARS * 3) / 4).toString('base64');
  for (let start = 0; start < BIG_ROWS; start += 20_000) {
    const batch: RowWrite[] = [];
    for (let i = start; i < start + 20_000; i++) {
      batch.push({
        rowKey: encodeRowKey(layout.keyFormat, [BigInt(i)]),
        cells: [
          {
            kind: 'value',
            family: 'strings',
            qualifier: 'q',
            timestamp: 1,
            schemaId: 0,
            json: JSON.stringify(random.slice(i * VALUE_CHARS, (i + 1) * VALUE_CHARS)),
          },
        ],
      });
    }
    await h.store.write('default', 'sample_table', batch);
  }
  const url = new URL(`${h.base}${ROWS}?limit=-1`);
  const decoder = { gzip: createGunzip, br: createBrotliDecompress };

  /** Starts a compressed scan; `onDecoded` sees the decoded bytes as they arrive. */
  const scan = (encoding: 'gzip' | 'br', onDecoded: (chunk: Buffer, dec: NodeJS.ReadWriteStream) => void): ClientRequest => {
    const req = httpRequest({ host: url.hostname, port: url.port, path: url.pathname + url.search, headers: { 'accept-encoding': encoding } }, (res) => {
      t.equal(res.headers['content-encoding'], encoding);
      const dec = res.pipe(decoder[encoding]());
      dec.on('data', (chunk: Buffer) => onDecoded(chunk, dec));
      dec.on('error', () => undefined);
      res.on('error', () => undefined);
    });
    req.on('error', () => undefined);
    req.end();
    t.teardown(() => req.destroy());
    return req;
  };

  const released = async (req: ClientRequest): Promise<void> => {
    req.destroy();
    await until('the store scan to close', () => h.store.openScans === 0);
    await until('the scan slot to free', () => h.gateway.context.scans.active === 0);
  };

  for (const encoding of ['gzip', 'br'] as const) {
    // A client that reads the first decoded rows and stops: they arrived while the scan is open.
    let first: Buffer | undefined;
    const req = scan(encoding, (chunk, dec) => {
      if (first === undefined) {
        first = chunk;
        dec.pause();
      }
    });
    await until('the first decoded chunk', () => first !== undefined);
    await new Promise((r) => setTimeout(r, 500));
    t.equal(h.store.openScans, 1, `${encoding}: decoded rows arrived while the store scan is still open`);
    t.match(first!.toString('utf8'), /^\{"entityId":\[\d+\],"cells":/, `${encoding}: they are rows`);
    await released(req);

    // Held after its first chunk, a scan has already delivered that whole chunk, decodable: the
    // compressor flushed it instead of waiting for more input to fill a block.
    let release!: () => void;
    gate.hold = new Promise<void>((r) => (release = r));
    gate.firstChunk = undefined;
    const parts: Buffer[] = [];
    let got = 0;
    const held = scan(encoding, (chunk) => {
      parts.push(chunk);
      got += chunk.length;
    });
    await until('the first chunk', () => gate.firstChunk !== undefined);
    const want = gate.firstChunk!.length;
    await until(`all ${want} bytes of the first chunk decoded (${encoding})`, () => got >= want);
    t.equal(h.store.openScans, 1, `${encoding}: the scan is held after its first chunk`);
    t.equal(got, want, `${encoding}: exactly the first chunk arrived`);
    t.same(Buffer.concat(parts), gate.firstChunk, `${encoding}: the client decoded all ${want} bytes of the first chunk before the second was read`);
    t.ok(Buffer.concat(parts).toString('utf8').endsWith('\r\n'), 'whole rows');
    gate.hold = undefined;
    release();
    await released(held);
  }
});
