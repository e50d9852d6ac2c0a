/**
 * Scenario 5's Bigtable side: finding and starting the Cloud Bigtable emulator (cbtemulator) on
 * 127.0.0.1, loading the benchmark table into it, and the gateway configuration that serves it.
 * The emulator is killed when the scenario ends, and also when the benchmark process exits any
 * other way (an exit handler; SIGINT and SIGTERM handlers while it runs), so a failed or
 * interrupted run leaves no emulator behind.
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { existsSync } from 'node:fs';
import { delimiter, join } from 'node:path';
import { parseLayout } from '../lib/model/layout.js';
import { encodeRowKey } from '../lib/model/row-key.js';
import { SCHEMA_ID } from '../lib/model/schema-table.js';
import type { EncodedCell, RowWrite } from '../lib/model/types.js';
import { BigtableStore, bigtableTableId } from '../lib/store/bigtable/bigtable-store.js';
import { BENCH_INSTANCE, BENCH_LAYOUT, BENCH_TABLE, benchRowCells } from './dataset.js';

export const BIGTABLE_PROJECT = 'bench';
export const BIGTABLE_INSTANCE = 'bench';
export const BIGTABLE_PREFIX = 'bench';

/** Rows per store.write while loading (MutateRows calls of 500 rows, 4 in flight, inside the store). */
const LOAD_BATCH_ROWS = 5_000;

/** The emulator binary: on PATH, under $CLOUDSDK_ROOT_DIR or the usual SDK roots, or under `gcloud info`'s root. */
export function findCbtemulator(): string | undefined {
  for (const dir of (process.env.PATH ?? '').split(delimiter)) {
    if (dir && existsSync(join(dir, 'cbtemulator'))) return join(dir, 'cbtemulator');
  }
  for (const root of [process.env.CLOUDSDK_ROOT_DIR, '/usr/lib/google-cloud-sdk', '/usr/share/google-cloud-sdk', '/opt/google-cloud-sdk', '/google-cloud-sdk']) {
    const path = root && join(root, 'platform', 'bigtable-emulator', 'cbtemulator');
    if (path && existsSync(path)) return path;
  }
  const gcloud = spawnSync('gcloud', ['info', '--format=value(installation.sdk_root)'], { encoding: 'utf8', timeout: 15_000 });
  const root = gcloud.status === 0 ? gcloud.stdout.trim() : '';
  const path = root && join(root, 'platform', 'bigtable-emulator', 'cbtemulator');
  return path && existsSync(path) ? path : undefined;
}

export interface RunningEmulator {
  readonly pid: number;
  /** What a Bigtable client needs to reach the emulator (and no metadata server). */
  readonly env: Record<string, string>;
  stop(): Promise<void>;
}

/** Starts cbtemulator on 127.0.0.1 with a port the system picks; waits at most 30 s for it. */
export async function startCbtemulator(binary: string): Promise<RunningEmulator> {
  const child: ChildProcess = spawn(binary, ['-host', '127.0.0.1', '-port', '0'], { stdio: ['ignore', 'pipe', 'pipe'] });
  const killOnExit = (): void => {
    child.kill('SIGKILL');
  };
  // A benchmark stopped by a signal runs no 'exit' handlers: kill the emulator, then exit as the signal would.
  const onSignal = (signal: NodeJS.Signals): void => {
    child.kill('SIGKILL');
    process.exit(signal === 'SIGINT' ? 130 : 143);
  };
  process.on('exit', killOnExit);
  process.once('SIGINT', onSignal);
  process.once('SIGTERM', onSignal);
  const stop = (): Promise<void> =>
    new Promise<void>((resolve) => {
      process.removeListener('exit', killOnExit);
      process.removeListener('SIGINT', onSignal);
      process.removeListener('SIGTERM', onSignal);
      if (child.exitCode !== null || child.signalCode !== null) return resolve();
      const timer = setTimeout(() => child.kill('SIGKILL'), 5_000);
      child.once('exit', () => {
        clearTimeout(timer);
        resolve();
      });
      child.kill('SIGTERM');
    });
  try {
    const host = await new Promise<string>((resolve, reject) => {
      let output = '';
      const timer = setTimeout(() => reject(new Error(`cbtemulator did not start in 30 s: ${output}`)), 30_000);
      const onData = (b: Buffer): void => {
        output += b.toString();
        const m = /running on (127\.0\.0\.1:\d+)/.exec(output);
        if (m) {
          clearTimeout(timer);
          resolve(m[1]!);
        }
      };
      child.stdout!.on('data', onData);
      child.stderr!.on('data', onData);
      child.once('exit', (code) => {
        clearTimeout(timer);
        reject(new Error(`cbtemulator exited (${code}): ${output}`));
      });
      child.once('error', (e) => {
        clearTimeout(timer);
        reject(e);
      });
    });
    child.removeAllListeners('exit');
    child.stdout!.resume();
    child.stderr!.resume();
    return { pid: child.pid!, env: { BIGTABLE_EMULATOR_HOST: host, METADATA_SERVER_DETECTION: 'none', GCE_METADATA_HOST: '127.0.0.1:9' }, stop };
  } catch (e) {
    await stop();
    throw e;
  }
}

/** The Bigtable table id the gateway's store gives the benchmark table. */
export function benchBigtableTableId(): string {
  return bigtableTableId(BIGTABLE_PREFIX, BENCH_INSTANCE, BENCH_TABLE);
}

/** The full table name for a raw ReadRows. */
export function benchBigtableTableName(): string {
  return `projects/${BIGTABLE_PROJECT}/instances/${BIGTABLE_INSTANCE}/tables/${benchBigtableTableId()}`;
}

/** The gateway's configuration file text for the emulator's benchmark table. */
export function bigtableGatewayConfig(): string {
  return `logLevel: warn\nadmin: false\nstore:\n  kind: bigtable\n  projectId: ${BIGTABLE_PROJECT}\n  instanceId: ${BIGTABLE_INSTANCE}\n  tablePrefix: ${BIGTABLE_PREFIX}\n`;
}

/** The schema id of each benchmark column (the layout's types, pre-registered ids). */
const SCHEMA_IDS: Record<string, number> = { a: SCHEMA_ID.string, b: SCHEMA_ID.long, c: SCHEMA_ID.double, e: SCHEMA_ID.int, f: SCHEMA_ID.string };

/**
 * The exact size of a revision 3 full scan of `rows` benchmark rows (each row's document and its
 * CR LF), so a run that lost rows is caught without counting them.
 */
export function expectedScanBytes(rows: number): number {
  let bytes = 0;
  for (let id = 0; id < rows; id++) {
    const { timestamp, values } = benchRowCells(id);
    const cells = Object.keys(values)
      .sort()
      .map((q) => `"${q}":[{"timestamp":${timestamp},"value":${values[q]},"writer_schema":${SCHEMA_IDS[q]}}]`);
    bytes += Buffer.byteLength(`{"entityId":[${id}],"cells":{"d":{${cells.join(',')}}}}\r\n`);
  }
  return bytes;
}

/**
 * Creates the benchmark instance and table through the Bigtable store and writes `rows` rows of
 * the benchmark dataset (the same cells as the LMDB table of scenarios 1-4: the same row keys,
 * wire JSON values and writer_schema ids). The emulator must be in process.env already.
 */
export async function loadBigtable(rows: number): Promise<void> {
  const store = await BigtableStore.open({ projectId: BIGTABLE_PROJECT, instanceId: BIGTABLE_INSTANCE, tablePrefix: BIGTABLE_PREFIX });
  try {
    await store.createInstance(BENCH_INSTANCE);
    const layout = parseLayout(JSON.parse(BENCH_LAYOUT) as Record<string, unknown>);
    await store.createTable(BENCH_INSTANCE, layout);
    for (let first = 0; first < rows; first += LOAD_BATCH_ROWS) {
      const batch: RowWrite[] = [];
      for (let id = first; id < Math.min(rows, first + LOAD_BATCH_ROWS); id++) {
        const { timestamp, values } = benchRowCells(id);
        const cells: EncodedCell[] = Object.entries(values).map(([qualifier, json]) => ({ kind: 'value', family: 'd', qualifier, timestamp, schemaId: SCHEMA_IDS[qualifier]!, json }));
        batch.push({ rowKey: encodeRowKey(layout.keyFormat, [BigInt(id)]), cells });
      }
      await store.write(BENCH_INSTANCE, BENCH_TABLE, batch);
    }
  } finally {
    await store.close();
  }
}
