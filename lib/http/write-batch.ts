/**
 * A POST body's rows, validated and packed (RowBatch), written by one atomic store write.
 *
 * The embedded store takes them a slice at a time inside its write transaction
 * (LmdbStore.writeSlices), turned back into RowWrite objects 1,024 rows at a time from the packed
 * rows and let go as they are read: neither all the rows as objects (66 MB for 150,000 small rows)
 * nor all of them encoded as stored (compact rows hold the rendered JSON with timestamps and
 * writer schemas: about 3.6x these 63-byte rows) exist at once. The Bigtable store takes every row
 * as objects through Store.write; limits.maxPostCells bounds what that costs.
 */
import type { RowBatch } from '../model/cells/row-batch.js';
import { LmdbStore } from '../store/lmdb/lmdb-store.js';
import type { Store } from '../store/store.js';

/** Rows turned into objects at a time: ~1,000 rows are ~400 KB of short-lived objects. */
const SLICE_ROWS = 1024;

export async function writeBatch(store: Store, instance: string, table: string, batch: RowBatch): Promise<void> {
  if (batch.rows === 0) return;
  if (store instanceof LmdbStore) return store.writeSlices(instance, table, batch.slices(SLICE_ROWS, true));
  await store.write(instance, table, batch.all());
}
