/**
 * A POST body's rows, validated and packed (RowBatch), written by one atomic store write.
 *
 * The embedded store takes them as one prepared batch (lib/store/lmdb/prepared-batch.ts, the
 * format `rowgate import` writes), encoded a slice of rows at a time from the packed rows, so the
 * rows never all exist as RowWrite objects at once (66 MB for 150,000 small rows, whose prepared
 * batch is 10 MB); LmdbStore.write of those objects also raised RSS more than writePrepared of the
 * batch (93-97 MB against 50-87 MB, each alone in a process after a full collection). Counter
 * increments (they read the store inside the transaction, which prepared batches do not carry),
 * rows the prepared format does not hold (over 65,535 cells, a key over LMDB's limit: Store.write
 * then reports it) and the Bigtable store go through Store.write with every row as objects;
 * limits.maxPostCells bounds what that costs.
 */
import type { TableLayout } from '../model/types.js';
import type { RowBatch } from '../model/row-batch.js';
import { LmdbStore } from '../store/lmdb/lmdb-store.js';
import { packRows, type PreparedBatch } from '../store/lmdb/prepared-batch.js';
import type { Store } from '../store/store.js';

/** Rows turned into objects at a time: ~1,000 rows are ~400 KB of short-lived objects. */
const SLICE_ROWS = 1024;

export async function writeBatch(store: Store, instance: string, table: string, layout: TableLayout, batch: RowBatch): Promise<void> {
  if (batch.rows === 0) return;
  if (store instanceof LmdbStore && batch.increments === 0) {
    const prepared = prepare(batch, layout, store.maxRowKeyBytes);
    if (prepared !== undefined) return store.writePrepared(instance, table, prepared);
  }
  await store.write(instance, table, batch.all());
}

/**
 * The batch as one prepared batch, or undefined when a row does not fit the prepared format.
 * Prepared batches are their rows one after the other, so slices packed apart and put side by
 * side are the whole batch. They are put straight into one buffer, sized from the first slice for
 * all the rows and grown if the rows that follow are larger: parts kept and joined at the end would
 * hold the prepared rows twice at once (and packing every slice twice to learn the size first left
 * ~25 MB more garbage behind, packRows taking a zeroed MiB a call: 300,000 rows).
 */
function prepare(batch: RowBatch, layout: TableLayout, maxRowKeyBytes: number): PreparedBatch | undefined {
  let out: Uint8Array | undefined;
  let used = 0;
  let rowsSeen = 0;
  for (const slice of batch.slices(SLICE_ROWS)) {
    const part = packRows(slice, layout, maxRowKeyBytes);
    if (part === undefined) return undefined;
    rowsSeen += slice.length;
    const need = used + part.bytes.length;
    if (out === undefined || need > out.length) {
      // The bytes so far, per row, for every row, an eighth more for rows that vary.
      const estimate = Math.ceil((need / rowsSeen) * batch.rows * 1.125);
      const bigger = new Uint8Array(Math.max(estimate, need, out === undefined ? 0 : 2 * out.length));
      if (out !== undefined) bigger.set(out.subarray(0, used));
      out = bigger;
    }
    out.set(part.bytes, used);
    used = need;
  }
  batch.clear();
  return { bytes: out === undefined ? new Uint8Array(0) : out.subarray(0, used), rows: batch.rows };
}
