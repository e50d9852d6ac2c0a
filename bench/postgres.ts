/**
 * The peer a user would pick instead: PostgreSQL, as a throwaway cluster in the benchmark's temp
 * directory (initdb, a Unix socket in that directory and no TCP listener, stopped and removed at the
 * end, also on failure). It holds the benchmark's rows as a table of typed columns and gives the
 * two reference figures of bench/README.md: `\copy t FROM` of a text file (import) and
 * `COPY (SELECT row_to_json(t) FROM t) TO STDOUT` read by psql to /dev/null (export), each the
 * best of `runs`. Default settings (fsync and synchronous_commit on, as rowgate's commits sync).
 */
import { spawnSync } from 'node:child_process';
import { chmodSync, chownSync, existsSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { writeTsv } from './dataset.js';
import { run } from './harness.js';

export interface PostgresFigures {
  readonly version: string;
  /** Seconds of each `\copy ... FROM` run (table truncated before each). */
  readonly importSeconds: number[];
  /** Seconds of each COPY-as-JSON export run. */
  readonly exportSeconds: number[];
}

/** Why PostgreSQL cannot run here, or the directory of its binaries. */
export function findPostgres(): { bin: string } | { skipped: string } {
  const root = '/usr/lib/postgresql';
  if (!existsSync(root)) return { skipped: `PostgreSQL not installed (no ${root})` };
  const versions = readdirSync(root)
    .filter((v) => existsSync(join(root, v, 'bin', 'initdb')))
    .sort((a, b) => Number(b) - Number(a));
  if (versions.length === 0) return { skipped: `no initdb under ${root}/*/bin` };
  if (process.getuid?.() === 0 && spawnSync('id', ['-u', 'postgres']).status !== 0)
    return { skipped: 'running as root and there is no postgres user to run the server as' };
  return { bin: join(root, versions[0]!, 'bin') };
}

const PORT = '55432';
export const TABLE_DDL = 'CREATE TABLE t (id bigint PRIMARY KEY, ts bigint NOT NULL, a text, b bigint, c double precision, e int, f text)';

/** Loads `rows` rows into a throwaway cluster (withPostgres) and measures its import and export. */
export function measurePostgres(bin: string, rows: number, runs: number): Promise<PostgresFigures> {
  return withPostgres(bin, (pg) => measureIn(pg, rows, runs));
}

/** A running throwaway cluster: its socket directory, port, binaries and how to run its tools. */
export interface PostgresCluster {
  readonly dir: string;
  readonly port: string;
  readonly bin: string;
  readonly version: string;
  /** psql as the postgres role over the cluster's socket; resolves with stdout. */
  psql(args: string[], timeoutMs: number): Promise<string>;
  /** One of the cluster's binaries, run as the postgres user when this process is root. */
  server(tool: string, args: string[], timeoutMs: number): Promise<string>;
}

/**
 * Runs `fn` against a throwaway cluster started in a temporary directory of its own (default
 * settings: fsync and synchronous_commit on), then stops and removes it, also on failure.
 */
export async function withPostgres<T>(bin: string, fn: (pg: PostgresCluster) => Promise<T>): Promise<T> {
  const dir = mkdtempSync(join(tmpdir(), 'rowgate-bench-pg-'));
  try {
    return await startIn(bin, dir, fn);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/** The cluster in `dir` (the postgres user must reach it, which it cannot inside the benchmark's private temp dir). */
async function startIn<T>(bin: string, dir: string, fn: (pg: PostgresCluster) => Promise<T>): Promise<T> {
  const asRoot = process.getuid?.() === 0;
  const uid = asRoot ? Number(spawnSync('id', ['-u', 'postgres'], { encoding: 'utf8' }).stdout.trim()) : undefined;
  const gid = asRoot ? Number(spawnSync('id', ['-g', 'postgres'], { encoding: 'utf8' }).stdout.trim()) : undefined;
  if (uid !== undefined && gid !== undefined) {
    chownSync(dir, uid, gid);
    chmodSync(dir, 0o755);
  }
  // PostgreSQL refuses to run as root: its tools run as the postgres user then.
  const server = (tool: string, args: string[], timeoutMs: number): Promise<string> =>
    asRoot ? run('runuser', ['-u', 'postgres', '--', join(bin, tool), ...args], timeoutMs) : run(join(bin, tool), args, timeoutMs);
  const psql = (args: string[], timeoutMs: number): Promise<string> =>
    run(join(bin, 'psql'), ['-X', '-q', '-h', dir, '-p', PORT, '-U', 'postgres', '-v', 'ON_ERROR_STOP=1', ...args], timeoutMs);
  const data = join(dir, 'data');
  await server('initdb', ['-D', data, '-A', 'trust', '-U', 'postgres', '--no-sync'], 120_000);
  await server('pg_ctl', ['-D', data, '-l', join(dir, 'server.log'), '-w', '-t', '60', '-o', `-p ${PORT} -k ${dir} -c listen_addresses=''`, 'start'], 90_000);
  try {
    const version = (await psql(['-t', '-c', 'SHOW server_version'], 30_000)).trim();
    return await fn({ dir, port: PORT, bin, version, psql, server });
  } finally {
    await server('pg_ctl', ['-D', data, '-m', 'fast', '-w', 'stop'], 60_000).catch(() => undefined);
  }
}

async function measureIn(pg: PostgresCluster, rows: number, runs: number): Promise<PostgresFigures> {
  const { dir, bin, psql, version } = pg;
  const tsv = join(dir, 'rows.tsv');
  await writeTsv(tsv, rows);
  await psql(['-c', TABLE_DDL], 30_000);
  // The input file's dirty pages written back before the timed runs, as before rowgate's import.
  await run('sync', [], 300_000);
  const importSeconds: number[] = [];
  for (let i = 0; i < runs; i++) {
    if (i > 0) await psql(['-c', 'TRUNCATE t'], 60_000);
    const started = performance.now();
    await psql(['-c', `\\copy t FROM '${tsv}'`], 600_000);
    importSeconds.push((performance.now() - started) / 1000);
  }
  rmSync(tsv, { force: true });
  const count = Number((await psql(['-t', '-c', 'SELECT count(*) FROM t'], 60_000)).trim());
  if (count !== rows) throw new Error(`PostgreSQL holds ${count} rows, expected ${rows}`);
  const exportSeconds: number[] = [];
  for (let i = 0; i < runs; i++) {
    const started = performance.now();
    // To /dev/null, as curl writes the gateway's export.
    await run(
      'sh',
      ['-c', `"${join(bin, 'psql')}" -X -q -h "${dir}" -p ${PORT} -U postgres -c 'COPY (SELECT row_to_json(t) FROM t) TO STDOUT' > /dev/null`],
      600_000,
    );
    exportSeconds.push((performance.now() - started) / 1000);
  }
  return { version, importSeconds, exportSeconds };
}
