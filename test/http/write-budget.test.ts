/**
 * limits.writeBudgetBytes over real sockets and the real LMDB store: while one POST holds most of
 * the budget, a POST that would pass it is answered 503 RG_ERR_TOO_MANY_WRITES with Retry-After
 * and writes nothing (declared length or chunked), the gateway keeps serving reads and POSTs that
 * fit, and once the holder commits the budget is free again. A POST alone larger than the budget
 * is taken.
 */
import { request as httpRequest, type ClientRequest } from 'node:http';
import t from 'tap';
import { json, raw, rowsOf, startGateway, type RawResponse } from './harness.js';

const BUDGET = 4096;
const PATH = '/v1/instances/default/tables/sample_table/rows';

function rowJson(id: number): string {
  return `{"entityId":[${id}],"cells":{"strings":{"a":[{"value":"v${id}"}]}}}`;
}

/** An array body of rows `first` .. `first + count - 1`. */
function body(first: number, count: number): string {
  return `[${Array.from({ length: count }, (_, i) => rowJson(first + i)).join(',')}]`;
}

/** A POST whose head and first part are sent now; `finish` sends the rest and resolves with the answer. */
function openPost(base: string, text: string, sentNow: number): { req: ClientRequest; finish: () => Promise<RawResponse> } {
  const url = new URL(base);
  let answer!: Promise<RawResponse>;
  const req = httpRequest({
    host: url.hostname,
    port: url.port,
    method: 'POST',
    path: PATH,
    headers: { ...json, 'content-length': String(Buffer.byteLength(text)) },
  });
  answer = new Promise((resolve, reject) => {
    req.on('response', (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks).toString('utf8') }));
    });
    req.on('error', reject);
  });
  req.write(text.slice(0, sentNow));
  return {
    req,
    finish: () => {
      req.end(text.slice(sentNow));
      return answer;
    },
  };
}

/** A POST sent chunked (no declared length), 256 bytes a chunk. */
function postChunked(base: string, text: string): Promise<RawResponse> {
  const url = new URL(base);
  return new Promise((resolve, reject) => {
    const req = httpRequest({ host: url.hostname, port: url.port, method: 'POST', path: PATH, headers: { ...json, 'transfer-encoding': 'chunked' } }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks).toString('utf8') }));
    });
    // The server may answer and close before the whole body is sent.
    req.on('error', (e: NodeJS.ErrnoException) => (e.code === 'ECONNRESET' || e.code === 'EPIPE' ? undefined : reject(e)));
    for (let i = 0; i < text.length; i += 256) req.write(text.slice(i, i + 256));
    req.end();
  });
}

async function rowExists(base: string, id: number): Promise<boolean> {
  const r = await raw(base, 'GET', `${PATH}?eid=${encodeURIComponent(`[${id}]`)}`);
  if (r.status !== 200) throw new Error(`GET row ${id}: ${r.status} ${r.body}`);
  // A missing row is answered as a row without cells.
  const rows = rowsOf(r.body) as { cells: Record<string, unknown> }[];
  return rows.length === 1 && Object.keys(rows[0]!.cells).length > 0;
}

t.test('a POST past the write budget is a 503 with Retry-After and writes nothing; the gateway keeps serving', async (t) => {
  const h = await startGateway({ limits: { writeBudgetBytes: BUDGET } });
  t.teardown(() => h.close());
  // The holder: 3,000-odd bytes declared (taken whole once its head is read), half of it sent.
  const holderText = body(1000, Math.floor(3000 / rowJson(1000).length));
  t.ok(Buffer.byteLength(holderText) < BUDGET && Buffer.byteLength(holderText) > BUDGET / 2, 'the holder takes most of the budget');
  const holder = openPost(h.base, holderText, 100);
  // A POST of 2,000-odd bytes passes the budget once the holder's head is read. Until then it may
  // go through: those are written and counted (at most 100 tries).
  const probeText = (i: number): string => body(5000 + i * 100, 30);
  const written: number[] = [];
  let refused: RawResponse | undefined;
  let probe = 0;
  for (; probe < 100 && refused === undefined; probe++) {
    const r = await raw(h.base, 'POST', PATH, probeText(probe), json);
    if (r.status === 200) written.push(probe);
    else refused = r;
  }
  t.ok(refused, `a POST was refused within ${probe} tries`);
  t.equal(refused!.status, 503);
  t.equal(refused!.headers['retry-after'], '1');
  const err = JSON.parse(refused!.body) as { code: string; exception: string };
  t.equal(err.code, 'RG_ERR_TOO_MANY_WRITES');
  t.match(err.exception, /limits\.writeBudgetBytes \(4096\)/);
  const refusedFirst = 5000 + (probe - 1) * 100;
  t.notOk(await rowExists(h.base, refusedFirst), 'nothing of the refused POST is written');
  t.notOk(await rowExists(h.base, refusedFirst + 29), 'nor its last row');

  // A chunked POST past the budget: refused as its first chunk arrives, nothing written.
  const chunked = await postChunked(h.base, body(7000, 30));
  t.equal(chunked.status, 503);
  t.equal(chunked.headers['retry-after'], '1');
  t.notOk(await rowExists(h.base, 7000), 'nothing of the refused chunked POST is written');

  // Reads go on, and a POST that fits in what is left is written.
  t.equal((await raw(h.base, 'GET', `${PATH}?eid=${encodeURIComponent('[5000]')}`)).status, 200);
  const small = await raw(h.base, 'POST', PATH, rowJson(8000), json);
  t.equal(small.status, 200, 'a POST within the budget is taken');
  t.ok(await rowExists(h.base, 8000));

  // The holder commits: its rows are there and the budget is free again.
  const held = await holder.finish();
  t.equal(held.status, 200);
  t.ok(await rowExists(h.base, 1000));
  const again = await raw(h.base, 'POST', PATH, probeText(200), json);
  t.equal(again.status, 200, 'the budget is given back after the commit');
  for (const i of written) t.ok(await rowExists(h.base, 5000 + i * 100), `probe ${i}, answered 200, is written`);
});

t.test('a POST alone larger than the write budget is taken', async (t) => {
  const h = await startGateway({ limits: { writeBudgetBytes: BUDGET } });
  t.teardown(() => h.close());
  const big = body(1, 200);
  t.ok(Buffer.byteLength(big) > BUDGET);
  const r = await raw(h.base, 'POST', PATH, big, json);
  t.equal(r.status, 200);
  t.ok(await rowExists(h.base, 200));
  const chunked = await postChunked(h.base, body(300, 200));
  t.equal(chunked.status, 200);
  t.ok(await rowExists(h.base, 499));
});
