/**
 * A batch of rows already encoded as the embedded store's compact rows (compact-row.ts), sorted
 * by key and packed into one buffer: `rowgate import` builds it on its parsing thread and hands
 * the buffer over without a copy, so the writing thread mostly puts bytes (LmdbStore.writePrepared:
 * a new row of a compactOnly table is one put, an existing row is merged). Handing over the batch
 * as RowWrite objects instead cost 20% of the import's CPU in structured clone (profile of 200,000
 * rows x 5 cells).
 *
 * Rows are sorted by key because LMDB inserts in key order touch each B-tree page once per
 * transaction instead of once per row: 1,000,000 random-order puts of 450-byte rows in batches of
 * 100,000 ran at 85,000 rows/s sorted within each batch, against 37,000 with batches of 10,000
 * (synced commits, two in flight; .scratch micro-benchmark on this 2-core machine). The sort is
 * stable, so two lines of one row in a batch are applied in file order.
 *
 * Per row:  u16 prefix length | rowPrefix bytes | u32 encoded length | compact row of the row's cells
 *
 * Cells without a timestamp get the time the row is encoded here (the server time, once per row).
 * Rows the format does not carry (counter increments, which read the store; keys over the store's
 * limits, whose error Store.write reports; more cells than a compact row can count) make packRows
 * answer undefined, and the batch goes through Store.write.
 */
import type { RowWrite, TableLayout } from '../../model/types.js';
import { entityIdText } from '../store.js';
import { cellKeyLength, LMDB_MAX_KEY, rowPrefix } from './cell-key.js';
import { encodeCompactRow, MAX_COMPACT_COLUMNS } from './compact-row.js';
import { RowModel } from './row-model.js';

export interface PreparedBatch {
  /** The packed rows; its ArrayBuffer is the batch's own (transferable). */
  readonly bytes: Uint8Array;
  readonly rows: number;
}

/** The rows packed, sorted by key, or undefined when one of them must go through Store.write. */
export function packRows(rows: readonly RowWrite[], layout: TableLayout, maxRowKeyBytes: number): PreparedBatch | undefined {
  const entityIdJson = entityIdText(layout.keyFormat, 'json');
  const encoded: { prefix: Buffer; head: number; row: Buffer }[] = [];
  let bytes = 0;
  for (const row of rows) {
    if (row.rowKey.length > maxRowKeyBytes || row.cells.length > MAX_COMPACT_COLUMNS) return undefined;
    for (const cell of row.cells) {
      if (cell.kind === 'counter-increment') return undefined;
      // A row spilled to cell entries needs every cell key within LMDB's limit.
      if (cellKeyLength(row.rowKey, cell.family, cell.qualifier) > LMDB_MAX_KEY) return undefined;
    }
    const now = Date.now();
    const model = new RowModel();
    model.apply(row.cells, layout.families, now);
    model.trim(layout.families, now);
    const prefix = rowPrefix(row.rowKey);
    // A row whose cells all expired at once is still written: it may change cells already stored.
    const compact = encodeCompactRow(model, entityIdJson(row.rowKey));
    encoded.push({ prefix, head: prefix.length >= 4 ? prefix.readUInt32BE(0) : -1, row: compact });
    bytes += 6 + prefix.length + compact.length;
  }
  // Most pairs differ in their first four bytes (salted keys: nearly all): compared as numbers,
  // without a call into Buffer.compare, which was 7% of a parsing thread (50,000-row batches).
  encoded.sort((a, b) => (a.head !== b.head && a.head >= 0 && b.head >= 0 ? a.head - b.head : Buffer.compare(a.prefix, b.prefix)));
  // A buffer of its own (not a slice of Node's pool), so the batch can be transferred.
  const own = new Uint8Array(bytes);
  const out = Buffer.from(own.buffer, 0, bytes);
  let pos = 0;
  for (const { prefix, row } of encoded) {
    pos = out.writeUInt16LE(prefix.length, pos);
    pos += prefix.copy(out, pos);
    pos = out.writeUInt32LE(row.length, pos);
    pos += row.copy(out, pos);
  }
  return { bytes: own, rows: rows.length };
}

/** The rows of a packed batch, in packed (key) order: views of the batch's bytes. */
export function* preparedRows(batch: PreparedBatch): Generator<{ prefix: Buffer; encoded: Buffer }> {
  const b = Buffer.from(batch.bytes.buffer, batch.bytes.byteOffset, batch.bytes.byteLength);
  let pos = 0;
  while (pos < b.length) {
    const prefixLength = b.readUInt16LE(pos);
    const prefix = b.subarray(pos + 2, pos + 2 + prefixLength);
    pos += 2 + prefixLength;
    const length = b.readUInt32LE(pos);
    const encoded = b.subarray(pos + 4, pos + 4 + length);
    pos += 4 + length;
    yield { prefix, encoded };
  }
}
