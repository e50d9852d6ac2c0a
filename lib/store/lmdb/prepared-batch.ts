/**
 * A batch of rows already encoded into the embedded store's cell keys and values, packed into one
 * buffer: `rowgate import` builds it on its parsing thread and hands the buffer over without a
 * copy, so the writing thread only puts bytes (LmdbStore.writePrepared). Handing over the batch as
 * RowWrite objects instead cost 20% of the import's CPU in structured clone (serialize on one
 * thread, deserialize and collect on the other; profile of 200,000 rows x 5 cells).
 *
 * Per row:   u16 prefix length | rowPrefix bytes | u8 trim | u16 cells
 * Per cell:  u8 flags | u16 key length | cell key | u32 value length | cell value
 *
 * `trim` says what the writer must do about max_versions (see moreCellsThanVersions). A cell with
 * FLAG_SERVER_TIME has no timestamp of its own: its key ends in 8 placeholder bytes that the writer
 * fills with the row's write time, as Store.write does. Rows the format does not carry (counter
 * increments, which read the store; keys over LMDB's limit, whose error Store.write reports) make
 * packRows answer undefined, and the batch goes through Store.write.
 */
import { FOREVER, type EncodedCell, type RowWrite, type TableLayout } from '../../model/types.js';
import { CellKeyScratch, rowPrefix } from './cell-key.js';
import { encodeCounterCell, ValueCellScratch } from './cell-value.js';

/** LMDB's compiled-in key limit (platform-notes.md 3). */
export const LMDB_MAX_KEY = 1978;

export const TRIM_NEVER = 0;
export const TRIM_IF_ROW_EXISTS = 1;
export const TRIM_ALWAYS = 2;
export const FLAG_SERVER_TIME = 1;

export interface PreparedBatch {
  /** The packed rows; its ArrayBuffer is the batch's own (transferable). */
  readonly bytes: Uint8Array;
  readonly rows: number;
}

/**
 * True when some column of a family with a max_versions limit has more cells in `cells` than that
 * limit (counting cells, not distinct timestamps: an overestimate only costs a trim).
 */
export function moreCellsThanVersions(cells: readonly EncodedCell[], families: TableLayout['families']): boolean {
  if (cells.length > 32) {
    // Big rows: one count per column instead of comparing every pair.
    const counts = new Map<string, number>();
    for (const cell of cells) {
      const max = families.get(cell.family)!.maxVersions;
      if (max >= FOREVER) continue;
      const column = `${cell.family}\0${cell.qualifier}`;
      const n = (counts.get(column) ?? 0) + 1;
      if (n > max) return true;
      counts.set(column, n);
    }
    return false;
  }
  for (let i = 0; i < cells.length; i++) {
    const cell = cells[i]!;
    const max = families.get(cell.family)!.maxVersions;
    if (max >= FOREVER) continue;
    let n = 1;
    for (let j = 0; j < i; j++) {
      const other = cells[j]!;
      if (other.qualifier === cell.qualifier && other.family === cell.family) n++;
    }
    if (n > max) return true;
  }
  return false;
}

/**
 * What a row needs about max_versions and ttl_seconds after its cells are written (the `trim`
 * byte): a row written in a family with either limit is trimmed when it already had cells (the
 * trim also drops cells past their TTL), or always when the write alone exceeds max_versions.
 */
export function trimMode(cells: readonly EncodedCell[], families: TableLayout['families']): number {
  let limited = false;
  for (const cell of cells) {
    const family = families.get(cell.family)!;
    if (family.maxVersions < FOREVER || family.ttlSeconds < FOREVER) {
      limited = true;
      break;
    }
  }
  if (!limited) return TRIM_NEVER;
  return moreCellsThanVersions(cells, families) ? TRIM_ALWAYS : TRIM_IF_ROW_EXISTS;
}

/** The rows packed, or undefined when one of them must go through Store.write. */
export function packRows(rows: readonly RowWrite[], layout: TableLayout, maxRowKeyBytes: number): PreparedBatch | undefined {
  const keys = new CellKeyScratch();
  const values = new ValueCellScratch();
  let out = new Uint8Array(1024 * 1024);
  let pos = 0;
  const room = (n: number): void => {
    if (pos + n <= out.length) return;
    const bigger = new Uint8Array(Math.max(2 * out.length, pos + n));
    bigger.set(out.subarray(0, pos));
    out = bigger;
  };
  const u16 = (n: number): void => {
    out[pos++] = n & 0xff;
    out[pos++] = n >>> 8;
  };
  const u32 = (n: number): void => {
    out[pos++] = n & 0xff;
    out[pos++] = (n >>> 8) & 0xff;
    out[pos++] = (n >>> 16) & 0xff;
    out[pos++] = n >>> 24;
  };
  for (const row of rows) {
    if (row.rowKey.length > maxRowKeyBytes || row.cells.length > 0xffff) return undefined;
    const prefix = rowPrefix(row.rowKey);
    room(5 + prefix.length);
    u16(prefix.length);
    out.set(prefix, pos);
    pos += prefix.length;
    out[pos++] = trimMode(row.cells, layout.families);
    u16(row.cells.length);
    keys.setRow(prefix);
    for (const cell of row.cells) {
      if (cell.kind === 'counter-increment') return undefined;
      const key = keys.key(cell.family, cell.qualifier, cell.timestamp ?? 0);
      if (key.length > LMDB_MAX_KEY) return undefined;
      const value = cell.kind === 'value' ? values.value(cell.schemaId, cell.json) : encodeCounterCell(cell.value);
      room(7 + key.length + value.length);
      out[pos++] = cell.timestamp === undefined ? FLAG_SERVER_TIME : 0;
      u16(key.length);
      out.set(key, pos);
      pos += key.length;
      u32(value.length);
      out.set(value, pos);
      pos += value.length;
    }
  }
  // A copy of exactly the bytes used: the transferred buffer holds nothing else.
  return { bytes: out.slice(0, pos), rows: rows.length };
}
