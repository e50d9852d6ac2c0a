/**
 * Scan rows/s over a Bigtable emulator, in one run: through the gateway (HTTP GET of every row,
 * revision 3 JSON) and through the client directly (raw ReadRows of the same Bigtable table, and
 * the client's createReadStream), on the same data.
 *
 *   cbtemulator -host 127.0.0.1 -port 8086 &
 *   npm run build
 *   BIGTABLE_EMULATOR_HOST=127.0.0.1:8086 METADATA_SERVER_DETECTION=none GCE_METADATA_HOST=127.0.0.1:9 \
 *     node dist/bench/bigtable-scan.js [rows=50000]
 */
import { spawn } from 'node:child_process';
import { pino } from 'pino';
import { Bigtable } from '@google-cloud/bigtable';
import { buildConfig } from '../lib/config/config.js';
import { createGateway } from '../lib/http/server.js';
import { parseLayout } from '../lib/model/layout/layout.js';
import { END_OF_TIME } from '../lib/model/read/read-request.js';
import { BigtableStore, bigtableTableId } from '../lib/store/bigtable/bigtable-store.js';

const ROWS = Number(process.argv[2] ?? 50_000);
const PROJECT = 'bench';
const INSTANCE = 'bench';
const PREFIX = `b${Date.now().toString(36)}`;
const LAYOUT = {
  name: 'scan',
  keys_format: { encoding: 'FORMATTED', salt: { hash_size: 2 }, components: [{ name: 'id', type: 'LONG' }] },
  locality_groups: [
    {
      name: 'default',
      in_memory: false,
      max_versions: 1,
      ttl_seconds: 2147483647,
      compression_type: 'NONE',
      families: [
        { name: 'info', columns: ['a', 'b', 'c', 'd', 'e'].map((name) => ({ name, column_schema: { storage: 'UID', type: 'INLINE', value: '"string"' } })) },
      ],
    },
  ],
  version: 'layout-1.3.0',
};

if (!process.env.BIGTABLE_EMULATOR_HOST?.startsWith('127.0.0.1:')) {
  process.stderr.write('set BIGTABLE_EMULATOR_HOST=127.0.0.1:PORT (a running cbtemulator)\n');
  process.exit(2);
}

const store = await BigtableStore.open({ projectId: PROJECT, instanceId: INSTANCE, tablePrefix: PREFIX });
await store.createInstance('default');
const layout = parseLayout(LAYOUT);
await store.createTable('default', layout);
const loadStart = Date.now();
const value = JSON.stringify('x'.repeat(40));
for (let i = 0; i < ROWS; i += 2000) {
  const rows = [];
  for (let n = i; n < Math.min(ROWS, i + 2000); n++) {
    const key = Buffer.alloc(10);
    key.writeUInt16BE(n % 65536, 0);
    key.writeBigUInt64BE(BigInt(n) ^ (1n << 63n), 2);
    rows.push({
      rowKey: key,
      cells: ['a', 'b', 'c', 'd', 'e'].map((q) => ({ kind: 'value' as const, family: 'info', qualifier: q, timestamp: 1000, schemaId: 0, json: value })),
    });
  }
  await store.write('default', 'scan', rows);
}
process.stdout.write(`loaded ${ROWS} rows x 5 cells in ${Date.now() - loadStart} ms\n`);

const gateway = createGateway(buildConfig({ host: '127.0.0.1', port: 0, admin: false }), store, pino({ level: 'silent' }));
const { port } = await gateway.listen();

/** The HTTP client is curl, in its own process, so the gateway figure is not charged for it. */
function viaGateway(): Promise<number> {
  return new Promise((resolve, reject) => {
    const curl = spawn('curl', ['-sS', '--fail', `http://127.0.0.1:${port}/v1/instances/default/tables/scan/rows?limit=-1`], {
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    let rows = 0;
    curl.stdout.on('data', (chunk: Buffer) => {
      for (let i = chunk.indexOf(10); i >= 0; i = chunk.indexOf(10, i + 1)) rows++;
    });
    curl.on('error', reject);
    curl.on('close', (code) => (code === 0 ? resolve(rows) : reject(new Error(`curl exited ${code}`))));
  });
}

const bigtable = new Bigtable({ projectId: PROJECT, metricsEnabled: false });
const tableId = bigtableTableId(PREFIX, 'default', 'scan');
const tableName = `projects/${PROJECT}/instances/${INSTANCE}/tables/${tableId}`;

async function rawReadRows(): Promise<number> {
  let rows = 0;
  for await (const response of bigtable.request({ client: 'BigtableClient', method: 'readRows', reqOpts: { tableName } }) as AsyncIterable<{
    chunks: { commitRow?: boolean }[];
  }>) {
    for (const chunk of response.chunks) if (chunk.commitRow) rows++;
  }
  return rows;
}

async function createReadStream(): Promise<number> {
  let rows = 0;
  for await (const _row of bigtable.instance(INSTANCE).table(tableId).createReadStream({ decode: false })) rows++;
  return rows;
}

async function storeScan(): Promise<number> {
  let rows = 0;
  let batches = 0;
  for await (const batch of store.scan('default', 'scan', { limit: -1, read: { maxVersions: 1, minTimestamp: 0, maxTimestamp: END_OF_TIME } })) {
    rows += batch.length;
    batches++;
  }
  if (process.env.DEBUG_BATCHES) process.stdout.write(`(${batches} batches)\n`);
  return rows;
}

const runs: [string, () => Promise<number>][] = [
  ['gateway GET (HTTP, rev 3 JSON)', viaGateway],
  ['store.scan (no HTTP)', storeScan],
  ['client raw ReadRows', rawReadRows],
  ['client createReadStream', createReadStream],
];
for (let round = 1; round <= 2; round++) {
  for (const [name, run] of runs) {
    const start = process.hrtime.bigint();
    const rows = await run();
    const ms = Number(process.hrtime.bigint() - start) / 1e6;
    process.stdout.write(`round ${round}  ${name.padEnd(32)} ${rows} rows in ${ms.toFixed(0)} ms = ${Math.round((rows / ms) * 1000)} rows/s\n`);
  }
}
await gateway.close();
await store.close();
await bigtable.close();
