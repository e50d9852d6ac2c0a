/**
 * `rowgate serve`: loads the configuration, opens the store (seeding a demo instance when the
 * embedded data directory does not exist yet), starts the gateway and prints
 * `listening on http://HOST:PORT` on stdout once it accepts connections (with --port 0, the port
 * actually bound). SIGTERM or SIGINT closes the gateway and the store and exits 0.
 *
 * `--workers N` (N > 1) runs N gateway processes (node:cluster) over the same configuration and
 * data directory, sharing one listening port: LMDB readers never block each other and writes are
 * serialized across processes by LMDB itself. The primary seeds the demo data once, prints the
 * listening line once every worker listens, forwards SIGTERM/SIGINT and restarts a worker that dies.
 */
import cluster from 'node:cluster';
import { existsSync, mkdirSync, readdirSync, renameSync, rmSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import type { Command } from 'commander';
import type { Logger } from 'pino';
import { loadConfig, type Config, type ConfigFlags } from '../../lib/config/config.js';
import { LOG_LEVELS } from '../../lib/config/config-env.js';
import { planReload } from '../../lib/config/config-reload.js';
import { createDemoData, DEMO_INSTANCE, DEMO_TABLE } from '../../lib/demo/demo-data.js';
import { createAdminServer } from '../../lib/admin/admin-server.js';
import { createGateway } from '../../lib/http/server.js';
import { createLogger } from '../../lib/logging/logger.js';
import { joinClusterMetrics, serveClusterMetrics } from '../../lib/metrics/metrics-cluster.js';
import { LmdbStore } from '../../lib/store/lmdb/lmdb-store.js';
import { openStore } from '../../lib/store/open-store.js';
import type { Store } from '../../lib/store/store.js';
import { isRowgateError } from '../../lib/errors.js';
import { CliError, EXIT_USAGE, systemErrorMessage } from '../support/cli-error.js';
import { checkPortsFree } from '../support/port-check.js';
import { startProgress } from '../support/progress.js';
import { withStoreOptions } from '../support/command-options.js';
import { checkDataPath } from '../support/store-options.js';

interface ServeFlags {
  readonly config?: string;
  readonly data?: string;
  readonly port?: string;
  readonly host?: string;
  readonly revision?: string;
  readonly workers?: string;
  readonly logLevel?: string;
  readonly adminPort?: string;
}

export function registerServe(program: Command): void {
  withStoreOptions(program.command('serve').description('serve the REST interface over the configured store (seeds demo data into a new data directory)'))
    .option('--port <n>', 'TCP port (default 8080; 0 = any free port, printed in the listening line)')
    .option('--host <host>', 'address to listen on (default 127.0.0.1)')
    .option('--revision <1|2|3>', 'interface revision served (default 3)')
    .option('--admin-port <n>', 'port of the admin listener (/healthz, /readyz, /metrics; default the main port + 1; 0 = any free port)')
    .option('--workers <n>', 'gateway processes sharing the port (node:cluster; default 1, e.g. one per core)')
    .option('--log-level <level>', `log level: ${LOG_LEVELS.join(', ')} (default info)`)
    .action(async (flags: ServeFlags) => {
      const workers = parseWorkers(flags.workers);
      if (workers > 1 && cluster.isPrimary) await servePrimary(flags, workers);
      else await serve(flags);
    });
}

function parseWorkers(text: string | undefined): number {
  if (text === undefined) return 1;
  const n = Number(text);
  if (!/^\d+$/.test(text) || n < 1 || n > 256) throw new CliError(`--workers must be an integer from 1 to 256, got ${JSON.stringify(text)}`, EXIT_USAGE);
  return n;
}

function configFlags(flags: ServeFlags): ConfigFlags {
  return {
    config: flags.config,
    data: flags.data,
    port: flags.port,
    host: flags.host,
    revision: flags.revision,
    logLevel: flags.logLevel,
    adminPort: flags.adminPort,
  };
}

/**
 * Reads the configuration, makes the logger, checks the ports and seeds a new data directory (both
 * modes start so; a cluster worker's ports were checked by the primary).
 */
async function prepare(flags: ServeFlags): Promise<{ config: Config; log: Logger }> {
  try {
    const config = loadConfig(configFlags(flags));
    const log = createLogger(config.logLevel);
    holdSighup(log);
    if (!cluster.isWorker) await checkPortsFree(config);
    await seedDemoIfNew(config, log);
    await upgradeLegacyTables(config, log);
    return { config, log };
  } catch (e) {
    throw startupError(e);
  }
}

let heldSighup: (() => void) | undefined;

/**
 * Until the gateway listens and takes SIGHUP for reloads, a SIGHUP (node's default: the process
 * ends) is only logged: the configuration is being read anyway.
 */
function holdSighup(log: Logger): void {
  heldSighup = () => log.warn('SIGHUP while starting: ignored (the configuration file is read at startup)');
  process.on('SIGHUP', heldSighup);
}

/** Replaces the starting-up SIGHUP handler with `reload`. */
function onSighup(reload: () => void): void {
  if (heldSighup !== undefined) process.off('SIGHUP', heldSighup);
  heldSighup = undefined;
  process.on('SIGHUP', reload);
}

/** How long the primary waits for the workers' reload outcomes before logging those that came. */
const RELOAD_REPORT_MS = 5000;

/** The cluster primary: seeds, forks `count` workers running serve(), prints one listening line. */
async function servePrimary(flags: ServeFlags, count: number): Promise<void> {
  const { config, log } = await prepare(flags);
  let stopping = false;
  let listening = 0;
  let announced = false;
  const fork = (): void => {
    cluster.fork();
  };
  // Workers report their gateway port by message: cluster's 'listening' event also fires for the
  // admin listener, whose port must not be announced as the gateway's.
  // Workers that listen (and reload on SIGHUP); a SIGHUP for one still starting waits until it does.
  const serving = new Set<number>();
  const hupWhenServing = new Set<number>();
  // A reload's outcomes from the workers it was sent to, logged as one line once all came (or after RELOAD_REPORT_MS).
  let reports: ReloadOutcome[] = [];
  let awaited = 0;
  let reportTimer: NodeJS.Timeout | undefined;
  const flushReports = (): void => {
    clearTimeout(reportTimer);
    reportTimer = undefined;
    logReload(log, reports);
    reports = [];
    awaited = 0;
  };
  cluster.on('message', (worker, message: { rowgateListening?: number; adminPort?: number; rowgateReloaded?: ReloadOutcome }) => {
    if (message?.rowgateReloaded !== undefined) {
      reports.push(message.rowgateReloaded);
      if (reports.length >= awaited) flushReports();
      return;
    }
    if (typeof message?.rowgateListening !== 'number') return;
    serving.add(worker.id);
    if (hupWhenServing.delete(worker.id)) worker.process.kill('SIGHUP');
    listening++;
    if (!announced && listening >= count) {
      announced = true;
      announce(config, message.rowgateListening, message.adminPort);
    }
  });
  cluster.on('exit', (worker, code, signal) => {
    serving.delete(worker.id);
    hupWhenServing.delete(worker.id);
    if (stopping) {
      if (Object.keys(cluster.workers ?? {}).length === 0) process.exit(); // process.exitCode: 2 when a worker failed to start
      return;
    }
    if (!announced) {
      // A worker that cannot start (port taken, bad data directory) stops the whole server.
      process.stderr.write(`rowgate: worker ${worker.process.pid} exited (${code ?? signal}) before listening\n`);
      stopping = true;
      for (const w of Object.values(cluster.workers ?? {})) w?.process.kill('SIGTERM');
      process.exitCode = EXIT_USAGE;
      if (Object.keys(cluster.workers ?? {}).length === 0) process.exit(EXIT_USAGE);
      return;
    }
    log.error({ pid: worker.process.pid, code, signal }, 'worker died: starting another');
    fork();
  });
  const stop = (signal: NodeJS.Signals): void => {
    if (stopping) return;
    stopping = true;
    log.info({ signal }, 'shutting down workers');
    const live = Object.values(cluster.workers ?? {});
    if (live.length === 0) process.exit(0);
    for (const w of live) w?.process.kill('SIGTERM');
  };
  process.on('SIGTERM', stop);
  process.on('SIGINT', stop);
  // Every worker re-reads the file itself (and logs what it did); the primary only takes the log level.
  onSighup(() => {
    // A file the primary refuses every worker would refuse too: said once, here, and not passed on.
    const next = readForReload(flags, log);
    if (next === undefined) return;
    log.level = next.logLevel;
    if (reportTimer !== undefined) flushReports();
    for (const w of Object.values(cluster.workers ?? {})) {
      if (w === undefined) continue;
      if (serving.has(w.id)) {
        awaited++;
        w.process.kill('SIGHUP');
      } else hupWhenServing.add(w.id);
    }
    reportTimer = setTimeout(flushReports, RELOAD_REPORT_MS).unref();
  });
  serveClusterMetrics();
  for (let i = 0; i < count; i++) fork();
}

/** The configuration as it reads now, or undefined (and why, logged) when it cannot be used. */
function readForReload(flags: ServeFlags, log: Logger): Config | undefined {
  if (configFlags(flags).config === undefined && !process.env.ROWGATE_CONFIG) {
    log.warn('SIGHUP: there is no configuration file to reload (--config or ROWGATE_CONFIG); nothing changed');
    return undefined;
  }
  try {
    return loadConfig(configFlags(flags));
  } catch (e) {
    log.error({ error: (e as Error).message }, 'SIGHUP: the configuration file was refused; the running configuration stays');
    return undefined;
  }
}

async function serve(flags: ServeFlags): Promise<void> {
  const { config, log } = await prepare(flags);
  let store: Store;
  try {
    store = await openStore(config.store);
  } catch (e) {
    throw startupError(e);
  }
  let gateway;
  let address;
  // The admin listener (/healthz, /readyz, /metrics); with --workers each worker serves one on the
  // shared port, and /metrics sums every worker's (metrics/metrics-cluster.ts).
  let admin;
  let adminAddress;
  try {
    gateway = createGateway(config, store, log);
    if (cluster.isWorker) joinClusterMetrics(gateway.metrics);
    admin = config.admin === false ? undefined : createAdminServer(config.admin, { store: gateway.context.store, metrics: gateway.metrics }, log);
    address = await gateway.listen();
    adminAddress = await admin?.listen();
  } catch (e) {
    await gateway?.close();
    await store.close();
    throw startupError(e);
  }

  let stopping = false;
  const stop = (signal: NodeJS.Signals): void => {
    if (stopping) {
      log.warn({ signal }, 'second signal: exiting without waiting for requests');
      process.exit(1);
    }
    stopping = true;
    log.info({ signal }, 'shutting down');
    gateway
      .close()
      .then(() => admin?.close())
      .then(() => store.close())
      .then(
        () => process.exit(0),
        (e: unknown) => {
          log.error({ err: e }, 'shutdown failed');
          process.exit(1);
        },
      );
  };
  process.on('SIGTERM', stop);
  process.on('SIGINT', stop);
  let running = config;
  onSighup(() => {
    const next = readForReload(flags, log);
    if (next === undefined) return;
    const before = running;
    const plan = planReload(before, next);
    if (plan.refused === undefined) {
      running = plan.config;
      gateway.reload(plan.config);
    }
    const outcome: ReloadOutcome = {
      pid: process.pid,
      changed: plan.changed,
      ignored: plan.ignored,
      refused: plan.refused,
      tokens: plan.config.auth?.tokens.map((t) => t.name),
    };
    // With --workers the primary logs one line for all of them (servePrimary).
    if (cluster.isWorker) process.send?.({ rowgateReloaded: outcome });
    else logReload(log, [outcome]);
    if (plan.refused === undefined && plan.config.auth === undefined && before.auth !== undefined)
      log.warn('no auth tokens configured: the gateway is open to every client that can reach it');
  });

  if (cluster.isWorker) {
    // The primary prints the listening lines once every worker listens.
    process.send?.({ rowgateListening: address.port, adminPort: adminAddress?.port });
    return;
  }
  announce(config, address.port, adminAddress?.port);
}

/** What one process made of a SIGHUP (a worker sends it to the primary). */
interface ReloadOutcome {
  readonly pid: number;
  readonly changed: readonly string[];
  readonly ignored: readonly string[];
  readonly refused?: string;
  readonly tokens?: readonly string[];
}

/**
 * One line for a reload, whatever the log level (an operator sending SIGHUP to a gateway at warn
 * saw nothing): at info through a logger of its own when the level is above info; `silent` stays
 * silent. `outcomes`: one per process (the workers', logged by the primary with their pids).
 */
function logReload(log: Logger, outcomes: readonly ReloadOutcome[]): void {
  if (outcomes.length === 0) return;
  const out = log.level === 'silent' || log.isLevelEnabled('info') ? log : log.child({}, { level: 'info' });
  const first = outcomes[0]!;
  const who = cluster.isPrimary && outcomes.some((o) => o.pid !== process.pid) ? { pid: process.pid, pids: outcomes.map((o) => o.pid) } : { pid: first.pid };
  const refused = outcomes.find((o) => o.refused !== undefined)?.refused;
  if (refused !== undefined) {
    out.error({ ...who, error: refused }, 'SIGHUP: the configuration file was refused; the running configuration stays');
    return;
  }
  if (first.ignored.length > 0) out.warn({ ...who, ignored: first.ignored }, 'SIGHUP: these settings changed but need a restart; ignored until then');
  out.info({ ...who, changed: first.changed, ...(first.tokens === undefined ? {} : { tokens: first.tokens }) }, 'configuration reloaded');
}

/** The contract lines (docs/cli.md, "serve"): `listening on ...`, then the admin listener's, on stdout. */
function announce(config: Config, port: number, adminPort: number | undefined): void {
  const urlHost = (host: string): string => (host.includes(':') ? `[${host}]` : host);
  process.stdout.write(`listening on ${config.tls ? 'https' : 'http'}://${urlHost(config.host)}:${port}\n`);
  if (config.admin !== false && adminPort !== undefined) process.stdout.write(`admin listening on http://${urlHost(config.admin.host)}:${adminPort}\n`);
}

/** Every failure before the server accepts connections exits 2 with its message. */
function startupError(e: unknown): CliError {
  if (e instanceof CliError) return new CliError(e.message, EXIT_USAGE);
  if (isRowgateError(e)) return new CliError(e.message, EXIT_USAGE);
  const system = systemErrorMessage(e);
  if (system !== undefined) return new CliError(system, EXIT_USAGE);
  const err = e instanceof Error ? e : new Error(String(e));
  return new CliError(err.stack ?? err.message, EXIT_USAGE);
}

/**
 * Tables of an embedded data directory written before compact rows (lib/store/lmdb/compact-row.ts)
 * are upgraded in place before the gateway listens (once; with --workers, by the primary before
 * forking), with a progress bar on a terminal and a log line per table. Their legacy rows would be
 * served correctly without it, through the slower cell path.
 */
async function upgradeLegacyTables(config: Config, log: Logger): Promise<void> {
  if (config.store.kind !== 'lmdb' || !existsSync(config.store.path)) return;
  const store = new LmdbStore({ path: config.store.path, scanThreads: 0 });
  try {
    for (const { instance, table } of store.legacyTables()) {
      const started = Date.now();
      log.info({ instance, table }, 'upgrading a table written by an earlier release to compact rows');
      const progress = startProgress(`upgrading ${instance}/${table}: {value} rows | {duration_formatted}`, undefined);
      const done = await store.upgradeTable(instance, table, (rows) => progress.update(rows)).finally(() => progress.stop());
      log.info({ instance, table, rows: done.rows, converted: done.converted, ms: Date.now() - started }, 'table upgraded');
    }
  } finally {
    await store.close();
  }
}

const STAGING_PREFIX = 'rowgate-seeding-';

/**
 * Removes the staging directories (`rowgate-seeding-<pid>`) in `dir` that a seeding process killed
 * before its rename left behind: those of processes that no longer run (on this machine). A
 * running process's one is left alone: two serve processes may seed at once (the later rename
 * loses and uses the other's directory).
 */
function removeStaleStaging(dir: string): void {
  for (const name of readdirSync(dir)) {
    if (!name.startsWith(STAGING_PREFIX)) continue;
    const pid = Number(name.slice(STAGING_PREFIX.length));
    if (!Number.isSafeInteger(pid) || pid <= 0 || (pid !== process.pid && isRunning(pid))) continue;
    rmSync(join(dir, name), { recursive: true, force: true });
  }
}

function isRunning(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (e) {
    // EPERM: it runs, as another user.
    return (e as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/**
 * A missing embedded data directory is created with the demo instance and table. The data is
 * written into a sibling directory that is renamed into place once complete, so an interrupted
 * start never leaves a half-seeded directory that later starts would take for user data.
 */
async function seedDemoIfNew(config: Config, log: Logger): Promise<void> {
  if (config.store.kind !== 'lmdb') return;
  if (existsSync(config.store.path)) {
    checkDataPath(config.store.path, true);
    // Demo data goes only into a folder that does not exist yet; an existing one may be a mistyped --data.
    if (!existsSync(join(config.store.path, 'data.mdb'))) {
      log.warn({ path: config.store.path }, 'the data directory holds no store: starting an empty store without demo data (check --data or store.path)');
    }
    return;
  }
  const target = resolve(config.store.path);
  mkdirSync(dirname(target), { recursive: true });
  // No dot in the name: lmdb-js opens a path with an extension as a file, not a directory.
  const staging = join(dirname(target), `${STAGING_PREFIX}${process.pid}`);
  removeStaleStaging(dirname(target));
  rmSync(staging, { recursive: true, force: true });
  const started = Date.now();
  let store: Store;
  try {
    store = await openStore({ kind: 'lmdb', path: staging });
  } catch (e) {
    // Refused before anything was written (a full disk): no staging directory left behind.
    rmSync(staging, { recursive: true, force: true });
    throw e;
  }
  let seeded;
  try {
    seeded = await createDemoData(store);
  } finally {
    await store.close();
  }
  try {
    renameSync(staging, target);
  } catch (e) {
    rmSync(staging, { recursive: true, force: true });
    // Another process created the directory meanwhile: use theirs.
    if (!existsSync(target)) throw e;
    return;
  }
  log.info(
    { path: config.store.path, instance: DEMO_INSTANCE, table: DEMO_TABLE, rows: seeded.rows, cells: seeded.cells, ms: Date.now() - started },
    'created a new data directory with demo data',
  );
}
