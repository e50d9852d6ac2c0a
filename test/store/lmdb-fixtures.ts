/**
 * Shared by the LMDB scan tests: a throwaway store holding the sample table, and the two ways to
 * turn a scan into text that they compare (rows serialized one by one, and the fast path's chunks).
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Test } from 'tap';
import type { Revision } from '../../lib/config/config.js';
import { rowRenderSpec, rowSerializer } from '../../lib/rows/row-format.js';
import { parseLayout } from '../../lib/model/layout/layout.js';
import { encodeRowKey } from '../../lib/model/keys/row-key.js';
import type { RowWrite, TableLayout } from '../../lib/model/types.js';
import { LmdbStore, type LmdbStoreOptions } from '../../lib/store/lmdb/lmdb-store.js';
import type { ChunkSpec, ScanRequest } from '../../lib/store/store.js';
import { SAMPLE_LAYOUT } from '../http/harness.js';

/** A store in a temporary directory (removed at teardown) with `instance` and its sample_table. */
export async function openSampleStore(
  t: Test,
  options: Omit<LmdbStoreOptions, 'path'> = {},
  instance = 'i',
): Promise<{ store: LmdbStore; layout: TableLayout }> {
  const layout = parseLayout(SAMPLE_LAYOUT);
  const { store } = await openStoreWithTable(t, layout, options, instance);
  return { store, layout };
}

/** A store in a temporary directory (removed at teardown) with `instance` and a table of `layout`; its directory. */
export async function openStoreWithTable(
  t: Test,
  layout: TableLayout,
  options: Omit<LmdbStoreOptions, 'path'> = {},
  instance = 'i',
): Promise<{ store: LmdbStore; dir: string }> {
  const dir = mkdtempSync(join(tmpdir(), 'rowgate-lmdb-'));
  const store = new LmdbStore({ noSync: true, ...options, path: dir });
  t.teardown(async () => {
    await store.close();
    rmSync(dir, { recursive: true, force: true });
  });
  await store.createInstance(instance);
  await store.createTable(instance, layout);
  return { store, dir };
}

/** The scan's rows serialized one by one (the reference), each followed by CR LF. */
export async function serializedScan(
  store: LmdbStore,
  instance: string,
  table: string,
  request: ScanRequest,
  layout: TableLayout,
  revision: Revision,
): Promise<string> {
  const serialize = rowSerializer(layout.keyFormat, revision);
  let text = '';
  for await (const batch of store.scan(instance, table, request)) for (const row of batch) text += serialize(row) + '\r\n';
  return text;
}

/** The scan through the store's fast path: its chunks' text and row count. */
export async function renderedScan(
  store: LmdbStore,
  instance: string,
  table: string,
  request: ScanRequest,
  revision: Revision,
): Promise<{ text: string; rows: number }> {
  const chunks: Buffer[] = [];
  let rows = 0;
  for await (const c of store.scanChunks(instance, table, request, rowRenderSpec(revision))) {
    chunks.push(c.bytes);
    rows += c.rows;
  }
  return { text: Buffer.concat(chunks).toString('utf8'), rows };
}

/** A chunk scan's bytes, each chunk copied as it comes (a scan thread renders into a buffer again once it is given back). */
export async function chunkScanBytes(store: LmdbStore, instance: string, table: string, request: ScanRequest, spec: ChunkSpec): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const c of store.scanChunks(instance, table, request, spec)) chunks.push(Buffer.from(c.bytes));
  return Buffer.concat(chunks);
}

/**
 * `count` rows of the sample table with 2-6 cells each: several versions, a counter, qualifiers
 * that need escaping (U+0000, quote, backslash, non-ASCII), values with CR LF, 14-digit timestamps.
 */
export function sampleRows(layout: TableLayout, count: number): RowWrite[] {
  const rows: RowWrite[] = [];
  for (let i = 0; i < count; i++) {
    const cells: RowWrite['cells'][number][] = [];
    for (let v = 0; v < (i % 4) + 1; v++)
      cells.push({
        kind: 'value',
        family: 'group_family',
        qualifier: 'string_qualifier',
        timestamp: 100 + v * 10 + (i % 3),
        schemaId: 0,
        json: JSON.stringify(`v${i}.${v}\r\n"é"`),
      });
    cells.push({ kind: 'counter-set', family: 'group_family', qualifier: 'counter', timestamp: 50, value: BigInt(i) * 1_000_000_000_000n });
    if (i % 3 === 0) cells.push({ kind: 'value', family: 'strings', qualifier: `q\u0000${i % 11}"\\ü`, timestamp: 2 ** 45 + i, schemaId: 0, json: '"s"' });
    if (i % 5 === 0) cells.push({ kind: 'value', family: 'longs', qualifier: `n${i % 300}`, timestamp: 7, schemaId: 3, json: String(i) });
    rows.push({ rowKey: encodeRowKey(layout.keyFormat, [i]), cells });
  }
  return rows;
}

/** A HASH-keyed table of one map family (keys hashed whole: no key order). */
export const HASH_LAYOUT = `{
  name: "hashed",
  keys_format: {encoding: "HASH", hash_type: "MD5", hash_size: 16},
  locality_groups: [{name: "default", in_memory: false, max_versions: 5, ttl_seconds: 2147483647, compression_type: "NONE",
    families: [{name: "m", map_schema: {type: "INLINE", value: '"string"'}}]}],
  version: "layout-1.0.0"
}`;

/** A HASH_PREFIX-keyed table with a counter column. */
export const HASH_PREFIX_LAYOUT = `{
  name: "prefixed",
  keys_format: {encoding: "HASH_PREFIX", hash_type: "MD5", hash_size: 2},
  locality_groups: [{name: "default", in_memory: false, max_versions: 2, ttl_seconds: 2147483647, compression_type: "NONE",
    families: [{name: "f", columns: [{name: "a", column_schema: {type: "INLINE", value: '"string"'}},
                                     {name: "n", column_schema: {type: "COUNTER", storage: "FINAL"}}]}]}],
  version: "layout-1.0.0"
}`;
