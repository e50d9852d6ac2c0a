/**
 * A store failure after the 200 headers went out (docs/interface.md, "The row stream"): the only honest signal
 * left is a truncated response, so the server destroys the socket. The client sees the 200, some
 * complete rows, then an abort (never a clean end); the store scan and the gateway's scan slot are
 * released, and the server keeps answering. Checked on the three scan sources: the LMDB fast path
 * on the calling thread, the fast path on the scan threads, and the serialized path (scan()).
 *
 * The store is the real LMDB store; only its scan iterators are wrapped so their 3rd next() throws.
 */
import { request } from 'node:http';
import t, { type Test } from 'tap';
import type { LmdbStore } from '../../lib/store/lmdb/lmdb-store.js';
import type { Store } from '../../lib/store/store.js';
import { raw, rowsOf, startGateway, type Harness, writeFillerRows } from './harness.js';

const ROWS = '/v1/instances/default/tables/sample_table/rows';
/** ~1.2 MB of row JSON: more than two 256 KiB fast-path chunks and more than ten 256-row batches. */
const ROW_COUNT = 4_000;
const FAIL_AT_NEXT = 3;
/**
 * The serialized path's stages hold a batch each (lib/rows/stages/pipeline.ts), so its scan is
 * read a few batches ahead of the socket: a failure within them reaches the handler before the
 * headers (a coded error response); later, it truncates the stream as on the fast path.
 */
const FAIL_AT_NEXT_STAGES = 10;

async function fill(h: Harness): Promise<void> {
  await writeFillerRows(h.store, ROW_COUNT, 250);
}

interface Injection {
  /** Scans opened through each method. */
  scans: { scan: number; scanChunks: number };
  /** Rows handed out by successful next() calls before the failure. */
  rowsBeforeFailure: number;
  failures: number;
}

/**
 * Wraps the store's scan methods (before the gateway first uses them: its store proxy caches
 * methods) so that the FAIL_AT_NEXT-th next() of every scan throws. return() stays the store's own,
 * so the cursor is released the normal way.
 */
function injectFailure(store: Store, failAt = FAIL_AT_NEXT): Injection {
  const injection: Injection = { scans: { scan: 0, scanChunks: 0 }, rowsBeforeFailure: 0, failures: 0 };
  const failing = <T>(it: { next(): Promise<IteratorResult<T>> }, rowsOf: (v: T) => number): void => {
    const next = it.next.bind(it);
    let calls = 0;
    it.next = async () => {
      calls++;
      if (calls === failAt) {
        injection.failures++;
        throw new Error('injected store failure (test)');
      }
      const r = await next();
      if (!r.done) injection.rowsBeforeFailure += rowsOf(r.value);
      return r;
    };
  };
  const scan = store.scan.bind(store);
  store.scan = (instance, table, req) => {
    injection.scans.scan++;
    const it = scan(instance, table, req);
    failing(it, (rows) => rows.length);
    return it;
  };
  if (store.scanChunks) {
    const scanChunks = store.scanChunks.bind(store);
    store.scanChunks = (instance, table, req, render) => {
      injection.scans.scanChunks++;
      const it = scanChunks(instance, table, req, render);
      failing(it, (chunk) => chunk.rows);
      return it;
    };
  }
  return injection;
}

interface Outcome {
  status: number;
  body: string;
  events: string[];
  errorCode?: string;
}

/** A GET that reads as fast as it can and reports how the response ended. */
function fetchToTheEnd(base: string, path: string): Promise<Outcome> {
  const url = new URL(base);
  return new Promise((resolve, reject) => {
    const req = request({ host: url.hostname, port: url.port, path }, (res) => {
      const outcome: Outcome = { status: res.statusCode ?? 0, body: '', events: [] };
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => outcome.events.push('end'));
      res.on('aborted', () => outcome.events.push('aborted'));
      res.on('error', (e: NodeJS.ErrnoException) => {
        outcome.events.push('error');
        outcome.errorCode = e.code;
      });
      res.on('close', () => {
        outcome.body = Buffer.concat(chunks).toString('utf8');
        resolve(outcome);
      });
    });
    req.on('error', reject);
    req.end();
  });
}

async function until(check: () => boolean, ms = 2000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!check() && Date.now() < deadline) await new Promise((r) => setTimeout(r, 10));
}

async function checkTruncatedStream(t: Test, h: Harness, injection: Injection, path: string): Promise<void> {
  const out = await fetchToTheEnd(h.base, path);
  t.equal(out.status, 200, 'the headers (200) went out before the failure');
  t.equal(injection.failures, 1, 'the injected failure happened once, mid-stream');
  t.notOk(out.events.includes('end'), `the response never ended cleanly (events: ${out.events.join(', ')})`);
  t.ok(
    out.events.includes('aborted') || out.errorCode === 'ECONNRESET',
    `the client saw the connection abort (events: ${out.events.join(', ')}, error code ${out.errorCode})`,
  );
  t.ok(out.body.length > 0, `${out.body.length} bytes arrived before the abort`);
  const complete = out.body.slice(0, out.body.lastIndexOf('\r\n') + 2);
  const rows = rowsOf(complete) as { entityId: number[] }[];
  t.ok(
    rows.length > 0 && rows.length <= injection.rowsBeforeFailure,
    `${rows.length} complete rows arrived, at most the ${injection.rowsBeforeFailure} read before the failure`,
  );
  t.ok(rows.length < ROW_COUNT, 'the response is truncated');
  await until(() => h.store.openScans === 0);
  t.equal(h.store.openScans, 0, 'the failed scan was closed in the store');
  t.equal(h.gateway.context.scans.active, 0, 'and its gateway scan slot released');
  const after = await raw(h.base, 'GET', `${ROWS}?limit=2`);
  t.equal(after.status, 200, 'the server still answers');
  t.equal(rowsOf(after.body).length, 2);
  const point = await raw(h.base, 'GET', `${ROWS}?eid=${encodeURIComponent('[7]')}`);
  t.equal(point.status, 200);
  t.same((rowsOf(point.body)[0] as { entityId: number[] }).entityId, [7]);
}

t.test('a store failure mid-stream on the fast path (scanChunks, calling thread) destroys the socket', async (t) => {
  const h = await startGateway();
  t.teardown(() => h.close());
  await fill(h);
  const injection = injectFailure(h.store);
  await checkTruncatedStream(t, h, injection, `${ROWS}?limit=-1`);
  t.same(injection.scans, { scan: 0, scanChunks: 2 }, 'GET rows used the rendered fast path (the failing scan and the follow-up scan)');
});

t.test('a store failure mid-stream on the scan threads (parallel fast path) destroys the socket', async (t) => {
  const h = await startGateway();
  t.teardown(() => h.close());
  await fill(h);
  const store = h.store as LmdbStore;
  t.ok(store.scanPool !== undefined, 'the store has scan threads');
  // A small table takes the parallel path with these thresholds (the defaults need 8 MB stored).
  store.parallelScan.minBytes = 0;
  store.parallelScan.partBytes = 64 * 1024;
  const injection = injectFailure(h.store);
  await checkTruncatedStream(t, h, injection, `${ROWS}?limit=-1`);
  t.ok(store.scanPool!.partsSubmitted > 0, 'the export ran on the scan threads');
});

t.test('a store failure mid-stream on the serialized path (no scanChunks) destroys the socket', async (t) => {
  const h = await startGateway();
  t.teardown(() => h.close());
  await fill(h);
  // A store without the fast path is served through scan() and rows serialized by the gateway.
  (h.store as { scanChunks?: unknown }).scanChunks = undefined;
  const injection = injectFailure(h.store, FAIL_AT_NEXT_STAGES);
  await checkTruncatedStream(t, h, injection, `${ROWS}?limit=-1`);
  t.same(injection.scans, { scan: 2, scanChunks: 0 }, 'GET rows used scan() (the failing scan and the follow-up scan)');
});
