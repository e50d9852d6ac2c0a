/**
 * The per-request pino log line (lib/http/server.ts): exactly one `request` line per request with
 * method, the route template (`-` when no route matched), status, duration in ms (a number), rows
 * (rows sent for a read, rows written for a POST, rows addressed by a DELETE) and `aborted` for a
 * client that went away before the response was complete.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { request } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import { pino } from 'pino';
import t, { type Test } from 'tap';
import { buildConfig } from '../../lib/config.js';
import { createGateway, type Gateway } from '../../lib/http/server.js';
import { parseLayout } from '../../lib/model/layout.js';
import { encodeRowKey } from '../../lib/model/row-key.js';
import type { RowWrite } from '../../lib/model/types.js';
import { LmdbStore } from '../../lib/store/lmdb/lmdb-store.js';
import { json, raw, rowsOf, SAMPLE_LAYOUT } from './harness.js';

const ROWS_ROUTE = '/v1/instances/:instance/tables/:table/rows';
const ROWS = '/v1/instances/default/tables/sample_table/rows';
const q = (v: unknown) => encodeURIComponent(JSON.stringify(v));

interface RequestLine {
  level: number;
  msg: string;
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
async function logged(t: Test, method: string, path: string, body?: string) {
  const before = requestLines().length;
  const started = performance.now();
  const res = await raw(base, method, path, body, body === undefined ? {} : json);
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
  t.equal(line.method, method);
  t.equal(typeof line.aborted, 'boolean');
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
  const layout = await store.getLayout('default', 'sample_table');
  const value = JSON.stringify('x'.repeat(1000));
  const batch: RowWrite[] = [];
  for (let i = 1000; i < 1000 + TOTAL; i++) {
    batch.push({ rowKey: encodeRowKey(layout.keyFormat, [BigInt(i)]), cells: [{ kind: 'value', family: 'strings', qualifier: 'q', timestamp: 1, schemaId: 0, json: value }] });
  }
  await store.write('default', 'sample_table', batch);
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
