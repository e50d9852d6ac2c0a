/**
 * Scenario 5's Bigtable side: loading the benchmark table into the Cloud Bigtable emulator (started
 * by cbtemulator.ts) and the gateway configuration that serves it.
 */
import { parseLayout } from '../lib/model/layout/layout.js';
import { encodeRowKey } from '../lib/model/keys/row-key.js';
import { SCHEMA_ID } from '../lib/model/avro/schema-table.js';
import type { EncodedCell, RowWrite } from '../lib/model/types.js';
import { BigtableStore, bigtableTableId } from '../lib/store/bigtable/bigtable-store.js';
import { BENCH_INSTANCE, BENCH_LAYOUT, BENCH_TABLE, benchRowCells } from './dataset.js';

export const BIGTABLE_PROJECT = 'bench';
export const BIGTABLE_INSTANCE = 'bench';
export const BIGTABLE_PREFIX = 'bench';

/** Rows per store.write while loading (MutateRows calls of 500 rows, 4 in flight, inside the store). */
const LOAD_BATCH_ROWS = 5_000;

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
        const cells: EncodedCell[] = Object.entries(values).map(([qualifier, json]) => ({
          kind: 'value',
          family: 'd',
          qualifier,
          timestamp,
          schemaId: SCHEMA_IDS[qualifier]!,
          json,
        }));
        batch.push({ rowKey: encodeRowKey(layout.keyFormat, [BigInt(id)]), cells });
      }
      await store.write(BENCH_INSTANCE, BENCH_TABLE, batch);
    }
  } finally {
    await store.close();
  }
}
