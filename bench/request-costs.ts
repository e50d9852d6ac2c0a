/**
 * `node dist/bench/request-costs.js`: what each step of a point GET (`GET rows?eid=[n]`, the bench
 * table, the default revision) costs on its own, in-process, without sockets: routing, query
 * parsing, read spec and limit, the entity id (parsed and MD5-salted into the row key), the store
 * read rendered as response bytes, metrics, and the request log line (the template into a LogSink
 * on /dev/null, beside pino's own `log.info` of the same fields into pino.destination, the way it
 * was written before). Each step runs ROUNDS times over 1,000 existing rows after a warm-up; the
 * figure is ns per call, the best of 5 rounds (the machine's other work only adds time).
 * Bounded: about 10 s in all.
 */
import { mkdtempSync, openSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import FindMyWay, { type HTTPMethod } from 'find-my-way';
import { pino } from 'pino';
import { buildConfig } from '../lib/config/config.js';
import { LogSink } from '../lib/logging/log-sink.js';
import { GatewayMetrics, instrumentStore } from '../lib/metrics/metrics.js';
import { dialectOf } from '../lib/rows/dialect.js';
import { parseQuery } from '../lib/http/query.js';
import { RequestLog } from '../lib/http/request-log.js';
import { rowRenderSpec } from '../lib/rows/row-format.js';
import { routesFor } from '../lib/http/routes.js';
import { resolveEntityId } from '../lib/model/keys/entity-id.js';
import { parseLayout } from '../lib/model/layout/layout.js';
import { parseLimit, parseReadSpec } from '../lib/model/read/read-request.js';
import { encodeRowInput } from '../lib/model/cells/row-input.js';
import { LmdbStore } from '../lib/store/lmdb/lmdb-store.js';
import { BENCH_INSTANCE, BENCH_LAYOUT, BENCH_TABLE, benchRowJson } from './dataset.js';

const ROWS = 1000;
/** The fields of one request's log line. */
const LINE = {
  reqId: 'a1b2c3d4-0000-4000-8000-000000000000',
  method: 'GET',
  route: '/v1/instances/:instance/tables/:table/rows', // ROUTE
  status: 200,
  ms: 0,
  rows: 1,
  aborted: false,
  client: '127.0.0.1',
  token: undefined,
  instance: BENCH_INSTANCE,
  table: BENCH_TABLE,
};
const ROUNDS = 200_000;
const ROUTE = '/v1/instances/:instance/tables/:table/rows';

function time(name: string, step: (i: number) => unknown): { name: string; ns: number } {
  let sink = 0;
  for (let i = 0; i < ROUNDS / 4; i++) if (step(i) !== undefined) sink++;
  let best = Infinity;
  for (let round = 0; round < 5; round++) {
    const started = process.hrtime.bigint();
    for (let i = 0; i < ROUNDS; i++) if (step(i) !== undefined) sink++;
    best = Math.min(best, Number(process.hrtime.bigint() - started) / ROUNDS);
  }
  if (sink < 0) throw new Error('unreachable');
  return { name, ns: best };
}

async function main(): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), 'rowgate-request-costs-'));
  const store = new LmdbStore({ path: dir, noSync: true, scanThreads: 0 });
  try {
    await store.createInstance(BENCH_INSTANCE);
    const layout = parseLayout(JSON.parse(BENCH_LAYOUT) as Record<string, unknown>);
    await store.createTable(BENCH_INSTANCE, layout);
    const stored = await store.getLayout(BENCH_INSTANCE, BENCH_TABLE);
    const schemas = await store.schemaTable(BENCH_INSTANCE);
    const rows = [];
    for (let id = 0; id < ROWS; id++) rows.push((await encodeRowInput(JSON.parse(benchRowJson(id)), { layout: stored, schemas })).row);
    await store.write(BENCH_INSTANCE, BENCH_TABLE, rows);

    const config = buildConfig({ port: 0, host: '127.0.0.1' });
    const dialect = dialectOf(config.revision);
    const router = FindMyWay<FindMyWay.HTTPVersion.V1>({ ignoreTrailingSlash: true, maxParamLength: 4096 });
    for (const r of routesFor(config.revision)) router.on(r.method as HTTPMethod, r.path, () => undefined, { template: r.path });
    const path = `/v1/instances/${BENCH_INSTANCE}/tables/${BENCH_TABLE}/rows`;
    const queries = Array.from({ length: ROWS }, (_, id) => `eid=${encodeURIComponent(`[${id}]`)}`);
    const eids = Array.from({ length: ROWS }, (_, id) => `[${id}]`);
    const read = parseReadSpec(stored, {});
    const keys = eids.map((e) => [resolveEntityId(stored.keyFormat, dialect.parseEid(e, stored.keyFormat, true))]);
    const render = rowRenderSpec(config.revision);
    const metrics = new GatewayMetrics(
      () => 0,
      () => 0,
    );
    const instrumented = instrumentStore(store, metrics);
    const devNull = openSync('/dev/null', 'w');
    const templated = new RequestLog(pino({ level: 'info', base: { service: 'rowgate' } }, new LogSink(devNull, { base: ',"service":"rowgate"' })));
    const viaPino = pino({ level: 'info', base: { service: 'rowgate' } }, pino.destination({ dest: '/dev/null', sync: false, minLength: 0 }));

    const results = [
      time('route (find-my-way find)', () => router.find('GET', path)),
      time('query string (parseQuery)', (i) => parseQuery(queries[i % ROWS]!)),
      time('read spec and limit', () => [parseReadSpec(stored, { cols: undefined, versions: undefined, timerange: undefined }), parseLimit(undefined)]),
      time('entity id parsed and salted (MD5) into the row key', (i) =>
        resolveEntityId(stored.keyFormat, dialect.parseEid(eids[i % ROWS]!, stored.keyFormat, true)),
      ),
      time('store read rendered as response bytes (getChunk)', (i) => store.getChunk(BENCH_INSTANCE, BENCH_TABLE, keys[i % ROWS]!, read, render)),
      time('the same with the layout, through the metrics wrapper', (i) => {
        instrumented.layoutNow!(BENCH_INSTANCE, BENCH_TABLE);
        return instrumented.getChunk!(BENCH_INSTANCE, BENCH_TABLE, keys[i % ROWS]!, read, render);
      }),
      time('metrics (GatewayMetrics.request)', () =>
        metrics.request({
          route: ROUTE,
          method: 'GET',
          status: 200,
          seconds: 0.0002,
          rows: 1,
          bytes: 420,
          aborted: false,
          bodyBytes: 0,
          instance: BENCH_INSTANCE,
          table: BENCH_TABLE,
          scan: false,
        }),
      ),
      time('request log line (template into LogSink)', (i) => templated.write({ ...LINE, ms: (i % 50) / 100 })),
      time('before: pino log.info of the same fields (sonic-boom)', (i) => viaPino.info({ ...LINE, token: undefined, ms: (i % 50) / 100 }, 'request')),
    ];
    const width = Math.max(...results.map((r) => r.name.length));
    process.stdout.write(`point GET steps, ns per call (best of 5 rounds of ${ROUNDS}):\n`);
    for (const r of results) process.stdout.write(`  ${r.name.padEnd(width)}  ${Math.round(r.ns).toString().padStart(6)}\n`);
    viaPino.flush();
  } finally {
    await store.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

await main();
