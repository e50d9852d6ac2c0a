/**
 * The per-request log line (lib/http/request-log.ts, written by lib/http/server.ts): exactly one
 * `request` line per request, shaped as pino's, with the request id (echoed in X-Request-Id),
 * method, the route template (`-` when no route matched), status, duration in ms (a number), rows
 * (rows sent for a read, rows written for a POST, rows addressed by a DELETE), `aborted` for a
 * client that went away before the response was complete, the client address, the token's name
 * and the instance and table the route names.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { request } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import { pino } from 'pino';
import t, { type Test } from 'tap';
import { buildConfig } from '../../lib/config/config.js';
import { sha256Hex } from '../../lib/http/auth.js';
import { createGateway, type Gateway } from '../../lib/http/server.js';
import { parseLayout } from '../../lib/model/layout/layout.js';
import { LmdbStore } from '../../lib/store/lmdb/lmdb-store.js';
import { json, raw, rowsOf, SAMPLE_LAYOUT, writeFillerRows } from './harness.js';

const ROWS_ROUTE = '/v1/instances/:instance/tables/:table/rows';
const ROWS = '/v1/instances/default/tables/sample_table/rows';
const q = (v: unknown) => encodeURIComponent(JSON.stringify(v));

interface RequestLine {
  level: number;
  time: number;
  msg: string;
  reqId: string;
  method: string;
  route: string;
  status: number;
  ms: unknown;
  rows: number;
  aborted: boolean;
}

const lines: Record<string, unknown>[] = [];
const sink = new Writable({
  write(chunk: Buffer, _encoding, callback) {
    for (const line of chunk.toString('utf8').split('\n')) if (line !== '') lines.push(JSON.parse(line) as Record<string, unknown>);
    callback();
  },
});
const requestLines = () => lines.filter((l) => l.msg === 'request') as unknown as RequestLine[];

let dir: string;
let store: LmdbStore;
let gateway: Gateway;
let base: string;

t.before(async () => {
  dir = mkdtempSync(join(tmpdir(), 'rowgate-log-'));
  // No scan threads: every scan runs on the calling thread (a cold worker start would only add noise to `ms`).
  store = new LmdbStore({ path: dir, noSync: true, scanThreads: 0 });
  await store.createInstance('default');
  await store.createTable('default', parseLayout(SAMPLE_LAYOUT));
  gateway = createGateway(buildConfig({ port: 0, host: '127.0.0.1' }), store, pino({ level: 'info' }, sink));
  base = `http://127.0.0.1:${(await gateway.listen()).port}`;
});
t.teardown(async () => {
  await gateway.close();
  await store.close();
  rmSync(dir, { recursive: true, force: true });
});

/** Waits for the `request` line of one more request (lines are written when the response closes), and returns it. */
async function nextLine(before: number): Promise<RequestLine> {
  const deadline = Date.now() + 3000;
  while (requestLines().length <= before && Date.now() < deadline) await new Promise((r) => setTimeout(r, 5));
  const all = requestLines();
  if (all.length <= before) throw new Error('no request log line was written');
  return all[before]!;
}

/** Sends a request and returns its response and its log line, checking that it wrote exactly one. */
async function logged(t: Test, method: string, path: string, body?: string, headers: Record<string, string> = {}, at = base) {
  const before = requestLines().length;
  const started = performance.now();
  const res = await raw(at, method, path, body, body === undefined ? headers : { ...json, ...headers });
  const line = await nextLine(before);
  const elapsed = performance.now() - started;
  await new Promise((r) => setTimeout(r, 30));
  t.equal(requestLines().length, before + 1, `${method} ${path.slice(0, 60)}: exactly one request line`);
  checkDuration(t, line, 0, elapsed);
  return { res, line };
}

/** `ms` is a number within what the client saw: at least `min`, at most the time from sending to the log line. */
function checkDuration(t: Test, line: RequestLine, min: number, elapsed: number): void {
  t.equal(typeof line.ms, 'number', 'ms is a number');
  const ms = line.ms as number;
  t.ok(ms >= min && ms <= elapsed + 1, `ms ${ms} lies within [${min}, ${elapsed.toFixed(2)}] (the client's view of the request)`);
}

function checkCommon(t: Test, line: RequestLine, method: string): void {
  t.equal(line.level, 30, 'logged at info');
  t.equal(typeof line.time, 'number', 'pino time field');
  t.equal(line.method, method);
  t.equal(typeof line.aborted, 'boolean');
  t.match(line.reqId, /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/, 'a generated request id (a version 4 UUID)');
  t.equal((line as unknown as Record<string, unknown>).client, '127.0.0.1', 'the client address');
}

t.test('a plain GET logs its route template, status 200, no rows, not aborted', async (t) => {
  const { res, line } = await logged(t, 'GET', '/v1/instances/default');
  t.equal(res.status, 200);
  checkCommon(t, line, 'GET');
  t.match(line, { route: '/v1/instances/:instance', status: 200, rows: 0, aborted: false });
});

t.test('an unknown route logs route "-" and 404; a wrong method logs "-" and 405', async (t) => {
  const missing = await logged(t, 'GET', '/v1/no/such/route');
  t.equal(missing.res.status, 404);
  checkCommon(t, missing.line, 'GET');
  t.match(missing.line, { route: '-', status: 404, rows: 0, aborted: false });
  const wrong = await logged(t, 'PUT', '/v1/instances');
  t.equal(wrong.res.status, 405);
  t.match(wrong.line, { method: 'PUT', route: '-', status: 405, rows: 0, aborted: false });
});

t.test('a POST logs the rows written; a scan, a point get and a bulk get the rows sent; a DELETE the rows addressed', async (t) => {
  const rows = Array.from({ length: 7 }, (_, i) => ({ entityId: [i], cells: { strings: { q: [{ value: `v${i}`, timestamp: 1 }] } } }));
  const post = await logged(t, 'POST', ROWS, JSON.stringify(rows));
  t.equal(post.res.status, 200, post.res.body);
  checkCommon(t, post.line, 'POST');
  t.match(post.line, { route: ROWS_ROUTE, status: 200, rows: 7, aborted: false });

  const scan = await logged(t, 'GET', `${ROWS}?limit=5`);
  t.equal(rowsOf(scan.res.body).length, 5);
  checkCommon(t, scan.line, 'GET');
  t.match(scan.line, { route: ROWS_ROUTE, status: 200, rows: 5, aborted: false });

  const all = await logged(t, 'GET', `${ROWS}?limit=-1`);
  t.match(all.line, { route: ROWS_ROUTE, status: 200, rows: 7, aborted: false });

  const none = await logged(t, 'GET', `${ROWS}?start_eid=${encodeURIComponent('rowkey_hex=ffff')}`);
  t.equal(none.res.body, '');
  t.match(none.line, { route: ROWS_ROUTE, status: 200, rows: 0, aborted: false });

  const point = await logged(t, 'GET', `${ROWS}?eid=${q([3])}`);
  t.match(point.line, { route: ROWS_ROUTE, status: 200, rows: 1, aborted: false });

  const bulk = await logged(t, 'GET', `${ROWS}?eids=${q([[1], [2], [4]])}`);
  t.equal(rowsOf(bulk.res.body).length, 3);
  t.match(bulk.line, { route: ROWS_ROUTE, status: 200, rows: 3, aborted: false });

  const del = await logged(t, 'DELETE', `${ROWS}?eids=${q([[5], [6]])}`);
  t.equal(del.res.status, 200, del.res.body);
  checkCommon(t, del.line, 'DELETE');
  t.match(del.line, { route: ROWS_ROUTE, status: 200, rows: 2, aborted: false });
});

t.test('a client error logs its status on the matched route template', async (t) => {
  const bad = await logged(t, 'GET', `${ROWS}?limit=ten`);
  t.equal(bad.res.status, 400);
  t.match(bad.line, { route: ROWS_ROUTE, status: 400, rows: 0, aborted: false });
  const badPost = await logged(t, 'POST', ROWS, '{"entityId": [1], "cells": {"nope": {"q": [{"value": "x"}]}}}');
  t.equal(badPost.res.status, 400);
  t.match(badPost.line, { route: ROWS_ROUTE, status: 400, rows: 0, aborted: false });
  const missing = await logged(t, 'GET', '/v1/instances/default/tables/no_such_table/rows');
  t.equal(missing.res.status, 404);
  t.match(missing.line, { route: ROWS_ROUTE, status: 404, aborted: false });
});

t.test('a client that disconnects mid-scan is logged as aborted, with the rows sent so far', async (t) => {
  // ~20 MB of row JSON: far more than the socket buffers hold, so the response cannot finish early.
  const TOTAL = 20_000;
  await writeFillerRows(store, TOTAL, 1000, { first: 1000, char: 'x' });
  const before = requestLines().length;
  const url = new URL(base);
  const started = performance.now();
  await new Promise<void>((resolve, reject) => {
    const req = request({ host: url.hostname, port: url.port, path: `${ROWS}?limit=-1` }, (res) => {
      t.equal(res.statusCode, 200);
      res.once('data', () => {
        res.pause();
        setTimeout(() => {
          req.destroy();
          resolve();
        }, 300);
      });
      res.on('error', () => undefined);
    });
    req.on('error', (e: NodeJS.ErrnoException) => {
      if (e.code !== 'ECONNRESET') reject(e);
    });
    req.end();
  });
  const line = await nextLine(before);
  const elapsed = performance.now() - started;
  await new Promise((r) => setTimeout(r, 50));
  t.equal(requestLines().length, before + 1, 'exactly one request line for the aborted scan');
  checkCommon(t, line, 'GET');
  // The line is written when the response closes: after the 300 ms the client held the connection paused.
  checkDuration(t, line, 295, elapsed);
  t.match(line, { route: ROWS_ROUTE, status: 200, aborted: true });
  t.ok(line.rows > 0 && line.rows < TOTAL, `rows ${line.rows}: some rows were sent before the disconnect, not all ${TOTAL}`);
});

t.test('a sane X-Request-Id is kept in the line and echoed; a missing or unsafe one is replaced by a new UUID, also echoed', async (t) => {
  const given = await logged(t, 'GET', '/v1/instances/default', undefined, { 'x-request-id': 'trace-7f3a:span/01+=@.x' });
  t.equal(given.res.headers['x-request-id'], 'trace-7f3a:span/01+=@.x', 'echoed as sent');
  t.equal(given.line.reqId, 'trace-7f3a:span/01+=@.x', 'logged as sent');
  const ids = new Set<string>();
  for (const unsafe of [undefined, '', 'with space', 'quote"d', 'x'.repeat(129), 'é']) {
    const headers: Record<string, string> = unsafe === undefined ? {} : { 'x-request-id': unsafe };
    const r = await logged(t, 'GET', '/v1/instances/default', undefined, headers);
    t.match(r.line.reqId, /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/, `${JSON.stringify(unsafe)}: replaced by a version 4 UUID`);
    t.equal(r.res.headers['x-request-id'], r.line.reqId, 'the response carries the id logged');
    ids.add(r.line.reqId);
  }
  t.equal(ids.size, 6, 'every generated id differs');
  // An error answer carries it too.
  const error = await logged(t, 'GET', `${ROWS}?limit=ten`, undefined, { 'x-request-id': 'bad-limit-1' });
  t.equal(error.res.status, 400);
  t.equal(error.res.headers['x-request-id'], 'bad-limit-1');
});

t.test('the line names the instance and table of its route (none on routes without them), and escapes what needs it', async (t) => {
  const rows = await logged(t, 'GET', `${ROWS}?limit=1`);
  t.match(rows.line, { instance: 'default', table: 'sample_table' });
  const instance = await logged(t, 'GET', '/v1/instances/default');
  t.match(instance.line, { instance: 'default' });
  t.notOk('table' in instance.line, 'no table on an instance route');
  const top = await logged(t, 'GET', '/v1/instances');
  t.notOk('instance' in top.line || 'table' in top.line, 'neither on the instance list');
  const odd = await logged(t, 'GET', `/v1/instances/${encodeURIComponent('we"ird\\')}/tables/t%C3%A9/rows`);
  t.equal(odd.res.status, 404);
  t.match(odd.line, { instance: 'we"ird\\', table: 'té' }, 'quotes, backslashes and non-ASCII survive as JSON');
});

t.test('with bearer tokens the line names the token; a refused request names none', async (t) => {
  const auth = { tokens: [{ name: 'reporting "job"', sha256: sha256Hex('secret-token-1'), scopes: { '*': 'read' } }] };
  const secured = createGateway(buildConfig({ port: 0, host: '127.0.0.1', auth }), store, pino({ level: 'info' }, sink));
  const at = `http://127.0.0.1:${(await secured.listen()).port}`;
  t.teardown(() => secured.close());
  const ok = await logged(t, 'GET', `${ROWS}?limit=1`, undefined, { authorization: 'Bearer secret-token-1' }, at);
  t.equal(ok.res.status, 200);
  t.match(ok.line, { token: 'reporting "job"', instance: 'default', table: 'sample_table', status: 200 });
  const refused = await logged(t, 'GET', `${ROWS}?limit=1`, undefined, { authorization: 'Bearer wrong' }, at);
  t.equal(refused.res.status, 401);
  t.notOk('token' in refused.line, 'no token name for a token that was not accepted');
});

const LINES = (() => {
  const base = {
    reqId: 'r-1',
    method: 'GET',
    route: ROWS_ROUTE,
    status: 200,
    ms: 0.05,
    rows: 1,
    aborted: false,
    client: '127.0.0.1',
    token: undefined,
    instance: 'default',
    table: 'sample_table',
  };
  return [
    base,
    { ...base, reqId: 'r-2', rows: 3, ms: 12.5 },
    { ...base, table: 'other', status: 404, rows: 0, ms: 1 },
    { ...base, instance: 'elsewhere', table: 'other', ms: 1234.07 },
    { ...base, client: '::1', aborted: true, ms: 0 },
    { ...base, token: 'reader', rows: 1_000_000 },
    { ...base, token: undefined, method: 'POST', status: 201 },
    { ...base, method: 'GET' },
    { ...base, route: '-', method: 'BREW', instance: undefined, table: undefined },
    { ...base, route: '-', method: 'GET', instance: undefined, table: undefined, client: undefined },
    { ...base, table: 'quo"te\\d', client: 'x\u00e9', reqId: 'id "quoted" \u00e9' },
    base,
  ];
})();

/** The lines pino itself writes for LINES (its log.info with the same fields, in the same order). */
function pinoLines(): string[] {
  const theirs: string[] = [];
  const reference = pino({ level: 'info', base: { pid: 7 } }, new Writable({ write: (chunk: Buffer, _e, cb) => (theirs.push(chunk.toString('utf8')), cb()) }));
  for (const { reqId, method, route, status, ms, rows, aborted, client, token, instance, table } of LINES) {
    reference.info({ reqId, method, route, status, ms, rows, aborted, client, token, instance, table }, 'request');
  }
  return theirs.join('').split('\n').filter(Boolean);
}

// Same fields in the same order with the same values; time may differ by the millisecond between the two writes.
const withoutTime = (s: string) => s.replace(/"time":\d+/, '"time":0');

t.test('RequestLog writes the line pino would write, as fields change from one request to the next (a stream)', async (t) => {
  // The line is assembled from pieces kept between requests (head per millisecond, route and
  // method, tail of client/token/instance/table): each change must show in the next line.
  const { RequestLog } = await import('../../lib/http/request-log.js');
  const ours: string[] = [];
  const log = new RequestLog(
    pino({ level: 'info', base: { pid: 7 } }, new Writable({ write: (chunk: Buffer, _e, cb) => (ours.push(chunk.toString('utf8')), cb()) })),
  );
  for (const l of LINES) log.write(l);
  const lines = ours.join('').split('\n').filter(Boolean);
  t.equal(lines.length, LINES.length, 'one line a request');
  t.same(lines.map(withoutTime), pinoLines().map(withoutTime), 'byte-identical to pino but for the time');
});

t.test('RequestLog encodes the line pino would write straight into a LogSink, as fields change', async (t) => {
  const { RequestLog } = await import('../../lib/http/request-log.js');
  const { LogSink } = await import('../../lib/logging/log-sink.js');
  const { openSync, readFileSync, closeSync } = await import('node:fs');
  const dir = mkdtempSync(join(tmpdir(), 'rowgate-reqlog-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  const path = join(dir, 'log');
  const fd = openSync(path, 'w');
  const sink = new LogSink(fd);
  const log = new RequestLog(pino({ level: 'info', base: { pid: 7 } }, sink));
  for (const l of LINES) log.write(l);
  sink.flush();
  closeSync(fd);
  const lines = readFileSync(path, 'utf8').split('\n').filter(Boolean);
  t.equal(lines.length, LINES.length, 'one line a request');
  t.same(lines.map(withoutTime), pinoLines().map(withoutTime), 'byte-identical to pino but for the time');
});

t.test('writeNumber writes what JSON.stringify writes: durations of two decimals, counts, and the rest', async (t) => {
  const { writeNumber } = await import('../../lib/http/request-log.js');
  const { ByteWriter } = await import('../../lib/bytes/byte-writer.js');
  const out = new ByteWriter(8);
  const mismatches: string[] = [];
  const check = (n: number) => {
    out.pos = 0;
    writeNumber(out, n);
    const got = out.buf.toString('latin1', 0, out.pos);
    if (got !== JSON.stringify(n) && mismatches.length < 5) mismatches.push(`${n}: ${got}`);
  };
  // Every duration up to 2,000 ms as the server rounds it (hundredths), then far beyond.
  for (let h = 0; h <= 200_000; h++) check(Math.round((h / 1e5) * 1e5) / 100);
  let x = 12345;
  for (let i = 0; i < 20_000; i++) {
    x = (x * 1103515245 + 12345) % 2147483648;
    check(Math.round(x * 4099) / 100);
    check(x * 4_194_301);
  }
  for (const n of [0, 9, 10, 99, 100, Number.MAX_SAFE_INTEGER, -1, -0.5, 0.001, 1e-7, 1e21, 2 ** 60, 123.456, NaN, Infinity]) check(n);
  t.same(mismatches, [], 'no number written otherwise');
});

t.test('a client that disconnects mid-body is logged as an aborted request at info, not as an internal error', async (t) => {
  const before = requestLines().length;
  const errorsBefore = lines.filter((l) => (l.level as number) >= 50).length;
  const url = new URL(base);
  await new Promise<void>((resolve) => {
    const req = request({ host: url.hostname, port: url.port, method: 'POST', path: ROWS, headers: { ...json, 'content-length': '100000' } });
    req.on('error', () => resolve());
    // Half a row, then the client is gone.
    req.write('[{"entityId": [1], "cells": {"strings": {"q": [{"value": "half');
    setTimeout(() => {
      req.destroy();
      resolve();
    }, 100);
  });
  const line = await nextLine(before);
  await new Promise((r) => setTimeout(r, 50));
  t.match(line, { route: ROWS_ROUTE, method: 'POST', aborted: true });
  t.equal(lines.filter((l) => (l.level as number) >= 50).length, errorsBefore, 'nothing logged at error');
  t.notOk(
    lines.some((l) => l.msg === 'internal error'),
    'no internal error',
  );
  t.ok(
    lines.some((l) => l.level === 30 && l.msg === 'request aborted by the client' && l.reqId === line.reqId),
    'an info line says the client went away mid-body',
  );
  const metrics = (await gateway.metrics.text()).body;
  t.match(metrics, /rowgate_http_responses_aborted_total\{route="\/v1\/instances\/:instance\/tables\/:table\/rows",method="POST"\} 1/, 'counted as aborted');
});
