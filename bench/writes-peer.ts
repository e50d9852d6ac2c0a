/**
 * Scenario 3 (single-row writes): rowgate's durable single-row POST beside PostgreSQL's single-row
 * INSERT at synchronous_commit=on (pgbench), at 1, 10 and 50 clients, on tables of BENCH_WRITE_ROWS
 * (100,000) rows each, same disk, same run. Every POST is acknowledged after its commit is durable
 * (docs/operations.md, "Durability of writes"), as every pgbench transaction is after its WAL flush.
 *
 * Both sides are closed loops of `clients` clients, each sending its next write when the last one
 * is answered, for BENCH_SECONDS. rowgate's client is this process (keep-alive HTTP over 127.0.0.1,
 * latencies from performance.now() in microseconds: autocannon rounds them to whole ms, too coarse
 * for a 1-client p50 of a fraction of a ms); PostgreSQL's is pgbench over its Unix socket
 * (prepared statements, its per-transaction log for the percentiles).
 *
 * Knobs: BENCH_SECONDS, BENCH_WRITE_ROWS (100000), BENCH_WRITE_CLIENTS (1,10,50). Run alone:
 * `node dist/bench/writes-peer.js` prints the figures as JSON.
 */
import { Agent, request } from 'node:http';
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { BENCH_INSTANCE, BENCH_LAYOUT, BENCH_TABLE, benchRowJson, writeNdjson } from './dataset.js';
import { run, startServer, stopServer, type BenchRow } from './harness.js';
import { findPostgres, TABLE_DDL, withPostgres, type PostgresCluster } from './postgres.js';

const HERE = dirname(fileURLToPath(import.meta.url));
const CLI = join(resolve(HERE, '..', '..'), 'tools', 'rowgate');
const LISTEN = /listening on http:\/\/[^:]+:(\d+)/;

/** One side at one client count. */
export interface WriteLoad {
  readonly clients: number;
  readonly perSecond: number;
  readonly p50Ms: number;
  readonly p99Ms: number;
  readonly writes: number;
  /** Writes that failed (a non-2xx answer, a socket error, an aborted pgbench transaction). */
  readonly failures: number;
}

export interface WritesPeerFigures {
  readonly tableRows: number;
  readonly seconds: number;
  readonly rowgate: WriteLoad[];
  readonly postgres?: { readonly version: string; readonly runs: WriteLoad[] } | { readonly skipped: string };
}

export interface WritesPeerOptions {
  readonly tmp: string;
  readonly seconds: number;
  readonly tableRows?: number;
  readonly clients?: readonly number[];
  /** The gateway's stderr (its request log at info, as the other scenarios keep it). */
  readonly logFile?: string;
  readonly note?: (line: string) => void;
}

export const DEFAULT_WRITE_CLIENTS = [1, 10, 50] as const;

/** Measures both sides (PostgreSQL skipped, and said so, where it cannot run). */
export async function measureWrites(o: WritesPeerOptions): Promise<WritesPeerFigures> {
  const tableRows = o.tableRows ?? Number(process.env.BENCH_WRITE_ROWS ?? 100_000);
  const clients = o.clients ?? (process.env.BENCH_WRITE_CLIENTS ?? DEFAULT_WRITE_CLIENTS.join(',')).split(',').map(Number);
  const note = o.note ?? (() => undefined);
  const rowgate = await measureRowgate(o.tmp, tableRows, clients, o.seconds, o.logFile, note);
  const found = findPostgres();
  if ('skipped' in found) return { tableRows, seconds: o.seconds, rowgate, postgres: { skipped: found.skipped } };
  const postgres = await withPostgres(found.bin, (pg) => measurePostgresInserts(pg, tableRows, clients, o.seconds, note));
  return { tableRows, seconds: o.seconds, rowgate, postgres };
}

/** Scenario 3's rows of run.ts's table: each client count's writes/s and p50 against PostgreSQL's. */
export async function writesPeerScenario(o: WritesPeerOptions & { readonly add: (row: BenchRow) => void }): Promise<WritesPeerFigures> {
  const figures = await measureWrites(o);
  const pg = figures.postgres !== undefined && 'runs' in figures.postgres ? figures.postgres.runs : undefined;
  for (const r of figures.rowgate) {
    const scenario = `3 durable single-row POST, ${r.clients} client${r.clients === 1 ? '' : 's'}`;
    if (r.failures > 0) {
      o.add({ scenario, figure: `INVALID: ${r.failures} failed of ${r.writes + r.failures}`, value: Math.round(r.perSecond), unit: 'writes/s', met: false });
      continue;
    }
    const peer = pg?.find((p) => p.clients === r.clients);
    if (peer === undefined) {
      const why = figures.postgres !== undefined && 'skipped' in figures.postgres ? figures.postgres.skipped : 'not run';
      o.add({ scenario, figure: `writes/s (vs PostgreSQL: skipped, ${why})`, value: Math.round(r.perSecond), unit: 'writes/s' });
      continue;
    }
    const ratio = Math.round((r.perSecond / peer.perSecond) * 1000) / 1000;
    o.add({
      scenario,
      figure: 'writes/s vs PostgreSQL INSERT (pgbench, synchronous_commit=on)',
      value: Math.round(r.perSecond),
      unit: 'writes/s',
      baseline: Math.round(peer.perSecond),
      ratio,
      ...(r.clients !== 1 && { target: '>= 1', met: ratio >= 1 }),
    });
    o.add({
      scenario,
      figure: 'p50 vs PostgreSQL p50',
      value: r.p50Ms,
      unit: `ms / ${r.p99Ms} ms p99`,
      baseline: peer.p50Ms,
      ratio: Math.round((r.p50Ms / peer.p50Ms) * 1000) / 1000,
      ...(r.clients === 1 && { target: '<= 1', met: r.p50Ms <= peer.p50Ms }),
    });
  }
  return figures;
}

// ------------------------------------------------------------------ rowgate

async function measureRowgate(
  tmp: string,
  tableRows: number,
  clients: readonly number[],
  seconds: number,
  logFile: string | undefined,
  note: (line: string) => void,
): Promise<WriteLoad[]> {
  const dir = join(tmp, 'writes-peer');
  rmSync(dir, { recursive: true, force: true });
  const data = join(dir, 'data');
  const layout = join(tmp, 'writes-peer-layout.json');
  const rows = join(tmp, 'writes-peer-rows.ndjson');
  const cfg = join(tmp, 'writes-peer.yaml');
  writeFileSync(layout, BENCH_LAYOUT);
  writeFileSync(cfg, 'admin: false\n');
  await writeNdjson(rows, tableRows);
  await run(process.execPath, [CLI, 'create-table', '--instance', BENCH_INSTANCE, '--layout', layout, '--data', data], 60_000);
  await run(process.execPath, [CLI, 'import', '--instance', BENCH_INSTANCE, '--table', BENCH_TABLE, '--data', data, rows], 600_000);
  rmSync(rows, { force: true });
  const results: WriteLoad[] = [];
  // New row ids above the table's; each run its own range.
  let next = 10_000_000;
  try {
    for (const n of clients) {
      await run('sync', [], 300_000);
      const server = await startServer(process.execPath, [CLI, 'serve', '--config', cfg, '--data', data, '--port', '0'], LISTEN, logFile);
      try {
        const r = await postLoop(server.port, n, seconds, () => next++);
        results.push(r);
        note(`single-row POST, ${n} client(s): ${Math.round(r.perSecond)} writes/s, p50 ${r.p50Ms} ms, p99 ${r.p99Ms} ms`);
      } finally {
        await stopServer(server);
      }
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
  return results;
}

/** `clients` closed-loop clients POSTing one new row each request for `seconds` (bounded: every request times out after 30 s). */
export async function postLoop(port: number, clients: number, seconds: number, nextId: () => number): Promise<WriteLoad> {
  const agent = new Agent({ keepAlive: true, maxSockets: clients });
  const path = `/v1/instances/${BENCH_INSTANCE}/tables/${BENCH_TABLE}/rows`;
  const latencies: number[] = [];
  let failures = 0;
  const post = (body: string): Promise<number> =>
    new Promise((resolveStatus) => {
      const req = request(
        {
          host: '127.0.0.1',
          port,
          path,
          method: 'POST',
          agent,
          timeout: 30_000,
          headers: { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) },
        },
        (res) => {
          res.resume();
          res.on('end', () => resolveStatus(res.statusCode ?? 0));
          res.on('error', () => resolveStatus(0));
        },
      );
      req.on('timeout', () => req.destroy(new Error('timeout')));
      req.on('error', () => resolveStatus(0));
      req.end(body);
    });
  // A warm-up write per client (connections open, code paths compiled), not counted.
  await Promise.all(Array.from({ length: clients }, () => post(benchRowJson(nextId()))));
  const started = performance.now();
  const until = started + seconds * 1000;
  const client = async (): Promise<void> => {
    while (performance.now() < until) {
      const body = benchRowJson(nextId());
      const t0 = performance.now();
      const status = await post(body);
      if (status >= 200 && status < 300) latencies.push(performance.now() - t0);
      else failures++;
    }
  };
  await Promise.all(Array.from({ length: clients }, client));
  const elapsed = (performance.now() - started) / 1000;
  agent.destroy();
  return { clients, perSecond: latencies.length / elapsed, ...percentiles(latencies), writes: latencies.length, failures };
}

function percentiles(ms: number[]): { p50Ms: number; p99Ms: number } {
  if (ms.length === 0) return { p50Ms: 0, p99Ms: 0 };
  const sorted = Float64Array.from(ms).sort();
  const at = (q: number): number => Math.round(sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))]! * 1000) / 1000;
  return { p50Ms: at(0.5), p99Ms: at(0.99) };
}

// ------------------------------------------------------------------ PostgreSQL

/**
 * One new row a transaction: a single-row INSERT of the benchmark's 7 typed columns (the row key,
 * its timestamp and the 5 cells), its id from a sequence (one statement, one round trip).
 */
const INSERT_SCRIPT = `\\set v random(0, 99999)
\\set w :v % 97
INSERT INTO t VALUES (nextval('ids'), 1700000000000 + :v::bigint, 'user-' || :v::text, :v::bigint * 7919, :v::float8 / 8, :v::int % 1000, 's' || :w::text);
`;

async function measurePostgresInserts(
  pg: PostgresCluster,
  tableRows: number,
  clients: readonly number[],
  seconds: number,
  note: (line: string) => void,
): Promise<{ version: string; runs: WriteLoad[] }> {
  await pg.psql(['-c', TABLE_DDL], 30_000);
  await pg.psql(
    [
      '-c',
      `INSERT INTO t SELECT i, 1700000000000 + i, 'user-' || i, i * 7919, (i % 100000) / 8.0, i % 1000, 's' || (i % 97) FROM generate_series(0, ${tableRows - 1}) i`,
    ],
    300_000,
  );
  await pg.psql(['-c', 'CREATE SEQUENCE ids START 10000000', '-c', 'CHECKPOINT'], 60_000);
  const script = join(pg.dir, 'insert.sql');
  writeFileSync(script, INSERT_SCRIPT);
  const runs: WriteLoad[] = [];
  for (const n of clients) {
    await run('sync', [], 300_000);
    const logDir = mkdtempSync(join(tmpdir(), 'rowgate-bench-pgbench-'));
    try {
      const prefix = join(logDir, 'tx');
      const out = await run(
        join(pg.bin, 'pgbench'),
        [
          '-n',
          '-h',
          pg.dir,
          '-p',
          pg.port,
          '-U',
          'postgres',
          '-M',
          'prepared',
          '-c',
          String(n),
          '-j',
          String(Math.min(n, 2)),
          '-T',
          String(seconds),
          '-f',
          script,
          '-l',
          `--log-prefix=${prefix}`,
          'postgres',
        ],
        (seconds + 120) * 1000,
      );
      const tps = /tps = ([\d.]+) \(without initial connection time\)/.exec(out);
      const failed = /number of failed transactions: (\d+)/.exec(out);
      // The per-transaction log: client, transaction number, latency (us), script, epoch s, us.
      const latencies: number[] = [];
      for (const f of readdirSync(logDir))
        for (const line of readFileSync(join(logDir, f), 'utf8').split('\n')) {
          const us = Number(line.split(' ')[2]);
          if (line !== '' && Number.isFinite(us)) latencies.push(us / 1000);
        }
      const r: WriteLoad = {
        clients: n,
        perSecond: tps === null ? latencies.length / seconds : Number(tps[1]),
        ...percentiles(latencies),
        writes: latencies.length,
        failures: failed === null ? 0 : Number(failed[1]),
      };
      runs.push(r);
      note(`PostgreSQL single-row INSERT, ${n} client(s): ${Math.round(r.perSecond)} tps, p50 ${r.p50Ms} ms, p99 ${r.p99Ms} ms`);
    } finally {
      rmSync(logDir, { recursive: true, force: true });
    }
  }
  return { version: pg.version, runs };
}

// ------------------------------------------------------------------ run alone

if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(process.argv[1]).href) {
  const tmp = mkdtempSync(join(tmpdir(), 'rowgate-bench-writes-'));
  measureWrites({
    tmp,
    seconds: Number(process.env.BENCH_SECONDS ?? 10),
    logFile: join(tmp, 'gateway.log'),
    note: (line) => process.stderr.write(`[bench] ${line}\n`),
  })
    .then((f) => process.stdout.write(JSON.stringify(f, null, 2) + '\n'))
    .finally(() => rmSync(tmp, { recursive: true, force: true }));
}
