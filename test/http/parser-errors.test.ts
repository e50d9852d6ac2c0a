/**
 * Requests node's HTTP parser refuses (malformed request line or header, bad chunked framing,
 * Content-Length with Transfer-Encoding, head or body too slow, head too large) are answered with
 * the coded JSON error body every other error has, `connection: close`, and the connection closed;
 * never written into a response under way, and after a response owed to an earlier pipelined request.
 */
import { once } from 'node:events';
import { connect, type Socket } from 'node:net';
import { setTimeout as delay } from 'node:timers/promises';
import t from 'tap';
import { raw, startGateway, writeFillerRows } from './harness.js';

const ROWS = '/v1/instances/default/tables/sample_table/rows';

interface Exchange {
  /** Everything the server sent before it closed the connection. */
  readonly received: string;
  readonly ms: number;
}

/** Opens a connection, sends `bytes` (then `more`, if given, every 50 ms), and waits for the server to close it (at most 20 s). */
async function exchange(base: string, bytes: string, more?: string): Promise<Exchange> {
  const url = new URL(base);
  const socket: Socket = connect(Number(url.port), url.hostname);
  await once(socket, 'connect');
  const started = Date.now();
  let received = '';
  socket.on('data', (b: Buffer) => (received += b.toString('latin1')));
  // The server may reset the connection after answering (request bytes left unread).
  socket.on('error', () => undefined);
  const closed = once(socket, 'close');
  socket.write(bytes);
  const drip = more === undefined ? undefined : setInterval(() => socket.writable && socket.write(more), 50);
  await Promise.race([closed, delay(20_000, undefined, { ref: false })]);
  clearInterval(drip);
  socket.destroy();
  return { received, ms: Date.now() - started };
}

/** Splits the responses in `received`; each must be whole (Content-Length bodies here). */
function responses(received: string): { status: number; headers: Record<string, string>; body: string }[] {
  const out: { status: number; headers: Record<string, string>; body: string }[] = [];
  let rest = received;
  while (rest.length > 0) {
    const end = rest.indexOf('\r\n\r\n');
    if (end < 0) throw new Error(`an incomplete response head: ${JSON.stringify(rest.slice(0, 200))}`);
    const [statusLine, ...lines] = rest.slice(0, end).split('\r\n');
    const headers = Object.fromEntries(lines.map((l) => [l.slice(0, l.indexOf(':')).toLowerCase(), l.slice(l.indexOf(':') + 1).trim()]));
    const length = Number(headers['content-length']);
    if (!Number.isInteger(length)) throw new Error(`no content-length: ${statusLine}`);
    out.push({ status: Number(/^HTTP\/1\.1 (\d{3}) /.exec(statusLine!)?.[1]), headers, body: rest.slice(end + 4, end + 4 + length) });
    rest = rest.slice(end + 4 + length);
  }
  return out;
}

const ROW = JSON.stringify({ entityId: [1], cells: { strings: { q: [{ value: 'v' }] } } });

const CASES: [string, string, number, string, RegExp][] = [
  ['a request line that is not HTTP', 'GARBAGE\r\n\r\n', 400, 'RG_ERR_BAD_HTTP_REQUEST', /not valid HTTP\/1\.1: .+ \(HPE_/],
  ['an unknown HTTP version', 'GET /v1 HTTP/9.9\r\nHost: x\r\n\r\n', 400, 'RG_ERR_BAD_HTTP_REQUEST', /HPE_/],
  ['a header line without a colon', 'GET /v1 HTTP/1.1\r\nHost: x\r\nNo colon here\r\n\r\n', 400, 'RG_ERR_BAD_HTTP_REQUEST', /HPE_/],
  ['a NUL in the target', 'GET /v1\u0000 HTTP/1.1\r\nHost: x\r\n\r\n', 400, 'RG_ERR_BAD_HTTP_REQUEST', /HPE_/],
  ['a malformed Content-Length', 'GET /v1 HTTP/1.1\r\nHost: x\r\nContent-Length: abc\r\n\r\n', 400, 'RG_ERR_BAD_HTTP_REQUEST', /HPE_/],
  [
    'Content-Length with Transfer-Encoding',
    `POST ${ROWS} HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: ${ROW.length}\r\nTransfer-Encoding: chunked\r\n\r\n${ROW}`,
    400,
    'RG_ERR_BAD_HTTP_REQUEST',
    /HPE_/,
  ],
  [
    'a broken chunked body',
    `POST ${ROWS} HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n${ROW.length.toString(16)}\r\n${ROW}\r\nZZ\r\n`,
    400,
    'RG_ERR_BAD_HTTP_REQUEST',
    /HPE_INVALID_CHUNK_SIZE/,
  ],
  [
    'a head over maxHeaderBytes',
    `GET /v1 HTTP/1.1\r\nHost: x\r\nX-Pad: ${'a'.repeat(9000)}\r\n\r\n`,
    431,
    'RG_ERR_HEADERS_TOO_LARGE',
    /limits\.maxHeaderBytes \(8192 bytes\)/,
  ],
];

t.test('each parser error gets the coded JSON error body, connection: close, and the connection closed', async (t) => {
  const h = await startGateway({ limits: { maxHeaderBytes: 8192, urlBytes: 4096 } });
  t.teardown(() => h.close());
  for (const [what, bytes, status, code, message] of CASES) {
    const { received } = await exchange(h.base, bytes);
    const answers = responses(received);
    t.equal(answers.length, 1, `${what}: one whole response, then the connection closed (${JSON.stringify(received.slice(0, 60))})`);
    const res = answers[0];
    if (res === undefined) continue;
    t.equal(res.status, status, `${what}: status`);
    t.equal(res.headers['content-type'], 'application/json', `${what}: a JSON body`);
    t.equal(res.headers.connection, 'close', `${what}: connection: close`);
    t.ok(res.headers.date, `${what}: a Date header`);
    const body = JSON.parse(res.body) as Record<string, unknown>;
    t.same(Object.keys(body), ['exceptionName', 'exception', 'status', 'code'], `${what}: the error body's fields`);
    t.match(body, { status, code, exception: message }, `${what}: ${res.body}`);
  }
  t.equal((await raw(h.base, 'GET', '/v1')).status, 200, 'the server still answers');
});

t.test('a HEAD request refused by the parser gets the head of the coded error and no body', async (t) => {
  const h = await startGateway({ limits: { maxHeaderBytes: 8192, urlBytes: 4096 } });
  t.teardown(() => h.close());
  // node:http's client reads no body after a HEAD: one would be an error on its connection.
  const big = await raw(h.base, 'HEAD', '/v1', undefined, { 'x-pad': 'a'.repeat(9000) });
  t.equal(big.status, 431);
  t.equal(big.body, '');
  t.ok(Number(big.headers['content-length']) > 0, 'the Content-Length of the body a GET would get');
  for (const bytes of ['HEAD /v1 HTTP/1.1\r\nHost: x\r\nNo colon here\r\n\r\n', `HEAD /v1 HTTP/1.1\r\nHost: x\r\nX-Pad: ${'a'.repeat(9000)}\r\n\r\n`]) {
    const { received } = await exchange(h.base, bytes);
    t.match(received, /^HTTP\/1\.1 4\d\d [^]*connection: close\r\n\r\n$/, `${JSON.stringify(bytes.slice(0, 40))}: the head, nothing after it`);
  }
});

t.test('what node would answer itself with an empty body, or not at all, gets the coded body too', async (t) => {
  const h = await startGateway();
  t.teardown(() => h.close());
  const cases: [string, string, number, string, RegExp][] = [
    ['an HTTP/1.1 request without Host', 'GET /v1 HTTP/1.1\r\n\r\n', 400, 'RG_ERR_BAD_HTTP_REQUEST', /must carry a Host header/],
    [
      'an Expect other than 100-continue',
      'GET /v1 HTTP/1.1\r\nHost: x\r\nExpect: 200-ok\r\n\r\n',
      417,
      'RG_ERR_EXPECTATION_FAILED',
      /Expect: "200-ok" cannot be met/,
    ],
    ['CONNECT', 'CONNECT example.org:443 HTTP/1.1\r\nHost: example.org:443\r\n\r\n', 400, 'RG_ERR_BAD_HTTP_REQUEST', /CONNECT is not served/],
  ];
  for (const [what, bytes, status, code, message] of cases) {
    // Each closes the connection after its answer, as node's own answers do.
    const { received, ms } = await exchange(h.base, bytes);
    t.ok(ms < 5000, `${what}: the connection was closed after the answer (${ms} ms)`);
    const [res] = responses(received);
    t.equal(res?.status, status, `${what}: ${JSON.stringify(received.slice(0, 80))}`);
    t.equal(res?.headers['content-type'], 'application/json', what);
    t.match(JSON.parse(res?.body ?? '{}'), { status, code, exception: message }, what);
  }
  t.equal((await raw(h.base, 'GET', '/v1')).status, 200, 'an HTTP/1.1 request with Host is served');
  const http10 = await exchange(h.base, 'GET /v1 HTTP/1.0\r\n\r\n');
  t.match(http10.received, /^HTTP\/1\.1 200 /, 'HTTP/1.0 needs no Host');
});

t.test('a head or body that does not arrive in time: 408 RG_ERR_REQUEST_TIMEOUT with the JSON body', async (t) => {
  const h = await startGateway({ limits: { headersTimeoutMs: 300, requestTimeoutMs: 600 } });
  t.teardown(() => h.close());
  // One header byte every 50 ms: never idle, never complete.
  const head = await exchange(h.base, 'GET /v1 HTTP/1.1\r\nHost: x\r\n', 'X');
  const [slowHead] = responses(head.received);
  t.equal(slowHead?.status, 408, `slow head answered after ${head.ms} ms`);
  t.match(JSON.parse(slowHead?.body ?? '{}'), { status: 408, code: 'RG_ERR_REQUEST_TIMEOUT', exception: /limits\.headersTimeoutMs \(300 ms\)/ });
  t.equal(slowHead?.headers.connection, 'close');
  // A POST whose body drips: its handler is waiting for the body, nothing of its response is written.
  const body = await exchange(h.base, `POST ${ROWS} HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 100000\r\n\r\n[`, ' ');
  const [slowBody] = responses(body.received);
  t.equal(slowBody?.status, 408, `slow body answered after ${body.ms} ms`);
  t.match(JSON.parse(slowBody?.body ?? '{}'), { status: 408, code: 'RG_ERR_REQUEST_TIMEOUT', exception: /limits\.requestTimeoutMs \(600 ms\)/ });
  t.equal((await raw(h.base, 'GET', `${ROWS}?limit=1`)).body, '', 'nothing was written');
});

t.test('pipelined garbage after a valid request: the valid request is answered first, then the coded 400', async (t) => {
  const h = await startGateway();
  t.teardown(() => h.close());
  for (const first of [
    'GET /v1 HTTP/1.1\r\nHost: x\r\n\r\n',
    `GET ${ROWS}?limit=5 HTTP/1.1\r\nHost: x\r\n\r\n`,
    `GET ${ROWS}?eid=[1] HTTP/1.1\r\nHost: x\r\n\r\n`,
  ]) {
    const { received } = await exchange(h.base, `${first}GARBAGE\r\n\r\n`);
    const head = received.slice(0, received.indexOf('\r\n'));
    t.equal(head, 'HTTP/1.1 200 OK', `${first.slice(0, 40)}: its own answer comes first`);
    const second = received.indexOf('HTTP/1.1 400 ');
    t.ok(second > 0, 'then the 400');
    const tail = received.slice(second);
    t.match(
      tail,
      /connection: close\r\n\r\n\{"exceptionName":"BadRequestException","exception":"the request is not valid HTTP\/1\.1: [^"]+","status":400,"code":"RG_ERR_BAD_HTTP_REQUEST"\}$/,
      'whole, and last',
    );
  }
});

t.test('a parser error while a streamed response is under way never writes into it', async (t) => {
  const h = await startGateway();
  t.teardown(() => h.close());
  // ~20 MB of rows: more than the socket buffers hold, so the scan is still under way while its client pauses.
  await writeFillerRows(h.store, 10_000, 2000, { char: 'x' });
  const url = new URL(h.base);
  const socket = connect(Number(url.port), url.hostname);
  await once(socket, 'connect');
  const chunks: Buffer[] = [];
  socket.on('data', (b: Buffer) => chunks.push(b));
  socket.on('error', () => undefined);
  const closed = once(socket, 'close');
  // A limit keeps the scan on the request's thread (a whole-table export of this size starts
  // worker threads first: seconds on a loaded machine before the first byte).
  socket.write(`GET ${ROWS}?limit=100000 HTTP/1.1\r\nHost: x\r\n\r\n`);
  for (let i = 0; i < 1000 && chunks.length === 0; i++) await delay(10);
  socket.pause();
  t.match(Buffer.concat(chunks).toString('latin1'), /^HTTP\/1\.1 200 OK\r\n/, 'the scan is streaming');
  // A broken second request arrives while the rows wait for the paused client.
  socket.write('GARBAGE\r\n\r\n');
  await delay(300);
  socket.resume();
  await Promise.race([closed, delay(20_000, undefined, { ref: false })]);
  socket.destroy();
  const received = Buffer.concat(chunks).toString('latin1');
  const error = received.indexOf('HTTP/1.1 400 ');
  t.ok(error > 0, 'the coded 400 was sent');
  t.equal(received.indexOf('HTTP/1.1 400 '), received.lastIndexOf('HTTP/1.1 400 '), 'once');
  // The last chunk, then the scan's trailers (X-Rowgate-Rows), then the blank line that ends them.
  t.match(received.slice(0, error), /\r\n0\r\n(?:[!-9;-~]+: [^\r\n]*\r\n)*\r\n$/, 'after the whole row stream and its trailers, not inside it');
  t.equal(
    received
      .slice(0, error)
      .split('\r\n')
      .filter((line) => line.startsWith('{"entityId"')).length,
    10_000,
    'every row arrived',
  );
  t.ok(received.endsWith('"code":"RG_ERR_BAD_HTTP_REQUEST"}'), 'the 400 is whole and last');
});
