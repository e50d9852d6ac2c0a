/**
 * A POST body's rows, validated and packed (RowBatch), written by one atomic store write
 * (Store.writeSlices), handed over 1,024 rows at a time from the packed rows. The embedded store
 * takes each slice inside its write transaction and lets it go, so neither all the rows as objects
 * (66 MB for 150,000 small rows) nor all of them encoded as stored exist at once. The Bigtable
 * store gathers every row as objects; limits.maxPostCells bounds what that costs.
 */
import type { RowBatch } from '../model/cells/row-batch.js';
import type { Store } from '../store/store.js';

/** Rows turned into objects at a time: ~1,000 rows are ~400 KB of short-lived objects. */
const SLICE_ROWS = 1024;

export async function writeBatch(store: Store, instance: string, table: string, batch: RowBatch): Promise<void> {
  if (batch.rows === 0) return;
  await store.writeSlices(instance, table, batch.slices(SLICE_ROWS, true));
}
