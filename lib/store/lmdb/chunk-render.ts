/**
 * The LMDB store's fused scan loop: the reference pipeline's filter, serialize and framing stages
 * (lib/rows/stages/) compiled into one pass over LMDB key and value bytes, writing rows into one
 * output Buffer per chunk through the one row document writer (lib/rows/row-document.ts), without
 * a row object or a JavaScript string per cell. test/store/fused-equivalence.test.ts sends
 * generated requests through both and requires the same bytes.
 *
 *  - filter: a compact row's columns by the plan CompactRenderer keeps per column
 *    (compact-render.ts), other cells by a CellPicker, the filter stage's own rule;
 *  - serialize: RowDocumentWriter, the entity id in the dialect's form;
 *  - framing: the terminator the spec names (CR LF, or LF for NDJSON), written after each row.
 *
 * A compact row (one entry) is rendered by CompactRenderer; the cells of a spilled or legacy row
 * (cell entries) one by one here: values are stored as wire JSON (../cell-value.ts), so a cell
 * costs a byte copy, the timestamp digits and the column's precomputed glue. Column identity is
 * found by comparing key bytes with a small per-scan cache of the columns seen so far, so family
 * and qualifier strings are decoded once per column, not once per cell.
 */
import type { ReadSpec, TableLayout } from '../../model/types.js';
import {
  docColumn,
  entityIdBytes,
  entityIdText,
  RowDocumentWriter,
  type DocColumn,
  type EntityIdBytes,
  type FramedRenderSpec,
} from '../../rows/row-document.js';
import { CellPicker } from '../cell-picker.js';
import type { RenderedChunk } from '../store.js';
import type { RowVisitor, ScanCursor } from './scan-cursor.js';
import { LMDB_MAX_KEY, readInvertedTimestamp, unescape, unescapeInto } from './cell-key.js';
import { COUNTER_SCHEMA_ID, valueJsonStart, valueSchemaId } from '../cell-value.js';
import { CompactRenderer } from './compact-render.js';
import { rowKeyOf } from './scan-cursor.js';

const TS_BYTES = 8;
const KIND_COUNTER = 2;
/** Columns remembered per scan; a map family with more distinct qualifiers decodes the rest. */
const COLUMN_CACHE = 256;

interface Column {
  /** `family 00 esc(qualifier) 00 00` as stored in the key. */
  readonly bytes: Buffer;
  readonly family: string;
  readonly qualifier: string;
  readonly doc: DocColumn;
  /** The column that came after this one last time: rows of a table mostly repeat one column order. */
  follower?: Column;
}

export class ChunkRenderer implements RowVisitor {
  private readonly out: RowDocumentWriter;
  private readonly columns: Column[] = [];
  private last: Column | undefined;
  /** Rows kept, and their cells, since the last takeChunk(). */
  private keptRows = 0;
  private keptCells = 0;
  /** The key of the last row kept (escaped: its entry's key, the row prefix), for takeChunk's lastRow. */
  private lastKey: Buffer | undefined;
  private lastKeyEscaped = false;
  /** Where the last row kept starts in the output. */
  private lastStart = 0;
  /** The row key of the row of cell entries being rendered. */
  private rowKey: Buffer | undefined;
  private readonly entityId: (rowKey: Buffer) => string;
  private readonly entityIdBytes: EntityIdBytes;
  /** A row key unescaped from its row prefix (no stored key is longer than LMDB's key limit). */
  private readonly keyScratch = Buffer.allocUnsafe(LMDB_MAX_KEY);
  private readonly picker: CellPicker;
  private readonly compact: CompactRenderer;

  /** `spares`: where a buffer comes from before a new one is made (scan workers keep the ones given back). */
  constructor(
    layout: TableLayout,
    read: ReadSpec,
    spec: FramedRenderSpec,
    now: number = Date.now(),
    initialBytes = 512 * 1024,
    private readonly spares?: (bytes: number) => Buffer | undefined,
  ) {
    this.out = new RowDocumentWriter(spares?.(initialBytes) ?? Buffer.allocUnsafeSlow(initialBytes), spec, spec.terminator);
    this.picker = new CellPicker(layout, read, now);
    this.compact = new CompactRenderer(layout, read, now);
    this.entityId = entityIdText(layout.keyFormat, spec.entityIdForm);
    this.entityIdBytes = entityIdBytes(layout.keyFormat, spec.entityIdForm);
  }

  get length(): number {
    return this.out.pos;
  }

  /** The output buffer (a scan worker keeps it for its next part once the last chunk is taken). */
  get buf(): Buffer {
    return this.out.buf;
  }

  /**
   * Hands out the rows rendered so far in the renderer's own buffer (an ArrayBuffer that can be
   * transferred to another thread without a copy; `length` bytes of it are used) and starts a new
   * buffer; undefined when no row was kept.
   */
  takeOwnedChunk(): { buffer: ArrayBuffer; length: number; rows: number; cells: number } | undefined {
    if (this.keptRows === 0) return undefined;
    const buf = this.out.buf;
    const chunk = { buffer: buf.buffer as ArrayBuffer, length: this.out.pos, rows: this.keptRows, cells: this.keptCells };
    // A buffer of its own (allocUnsafe pools only small buffers): moving it moves nothing else.
    this.out.buf = this.spares?.(buf.length) ?? Buffer.allocUnsafeSlow(buf.length);
    this.reset();
    return buf.byteOffset === 0 && buf.buffer.byteLength === buf.length ? chunk : { ...chunk, buffer: copyOf(buf, chunk.length) };
  }

  /** Drops whatever was rendered and not taken (a reused renderer starts clean even after a failure). */
  reset(): void {
    this.out.pos = 0;
    this.keptRows = 0;
    this.keptCells = 0;
    this.lastKey = undefined;
  }

  /**
   * Hands out the rows rendered so far (undefined when none was kept) and starts a new chunk;
   * with `lastRow`, where its last row starts and that row's key (a scan's limit cuts it there).
   */
  takeChunk(lastRow = true): RenderedChunk | undefined {
    if (this.keptRows === 0) return undefined;
    const out = this.out;
    // Copied out without a view of the range first (a subarray object a point get did not need).
    const bytes = Buffer.allocUnsafe(out.pos);
    out.buf.copy(bytes, 0, 0, out.pos);
    const chunk: RenderedChunk = {
      bytes,
      rows: this.keptRows,
      cells: this.keptCells,
      lastRow: lastRow ? { start: this.lastStart, rowKey: this.lastRowKey() } : undefined,
    };
    this.reset();
    return chunk;
  }

  beginRow(rowKey: Buffer): void {
    this.picker.beginRow();
    this.out.beginRowKey(this.entityIdBytes, rowKey, 0, rowKey.length, this.entityId);
    this.rowKey = rowKey;
  }

  /** Renders the cell when the picker keeps it; its value is `value[0, valueEnd)`. */
  cell(key: Buffer, rowEnd: number, value: Buffer, valueEnd: number = value.length): void {
    const col = this.columnOf(key, rowEnd);
    const timestamp = readInvertedTimestamp(key, key.length - TS_BYTES);
    if (!this.picker.keep(col.family, col.qualifier, timestamp)) return;
    if (value[0] === KIND_COUNTER) this.out.cellText(col.doc, timestamp, value.readBigInt64BE(1).toString(), COUNTER_SCHEMA_ID);
    else this.out.cellBytes(col.doc, timestamp, value, valueJsonStart(value), valueEnd, valueSchemaId(value));
  }

  /**
   * Ends the row; a row without kept cells is taken back (scans), or written with empty cells when
   * `keepEmpty` (point gets answer every row asked for). Returns whether the row was written.
   */
  endRow(keepEmpty = false): boolean {
    return this.kept(this.out.endRow(keepEmpty), this.rowKey!, false);
  }

  /** A row asked for that does not exist: its entity id with empty cells (point gets). */
  missingRow(rowKey: Buffer): void {
    this.beginRow(rowKey);
    this.endRow(true);
  }

  /**
   * Renders a compact row (compact-row.ts) held in `value`; `key` is its row key, or with
   * `escaped` its entry's key (the row prefix), unescaped only where the entity id needs it.
   * Returns whether it was written.
   */
  compactRow(key: Buffer, value: Buffer, keepEmpty = false, escaped = false): boolean {
    // An escaped row prefix (`esc(rowKey) 00 00`) is unescaped into one scratch buffer, not a new
    // Buffer a row: the bench's LONG keys mostly hold 00 bytes, and a copy a row was 8% of a scan
    // thread. The id is written from the key's bytes where it can.
    if (!escaped) return this.kept(this.renderCompact(key, key.length, value, keepEmpty), key, false);
    const end = unescapeInto(this.keyScratch, key, 0, key.length);
    return this.kept(this.renderCompact(this.keyScratch, end, value, keepEmpty), key, true);
  }

  /**
   * compactRow of a scan thread's entry read in place: its row prefix is `keys[start, end)` of
   * lmdb-js's key buffer, unescaped from there without a Buffer view of it (a view a row was ~4% of
   * a scan thread's profile). Its key is not kept: a scan thread's chunks name no last row
   * (takeOwnedChunk).
   */
  compactRowAt(keys: Buffer, start: number, end: number, value: Buffer): boolean {
    const n = unescapeInto(this.keyScratch, keys, start, end);
    return this.kept(this.renderCompact(this.keyScratch, n, value, false), undefined, true);
  }

  /** The row of the compact row in `value`, its row key `rowKey[0, end)`; whether it was written. */
  private renderCompact(rowKey: Buffer, end: number, value: Buffer, keepEmpty: boolean): boolean {
    this.out.beginRowKey(this.entityIdBytes, rowKey, 0, end, this.entityId);
    this.compact.render(this.out, value);
    return this.out.endRow(keepEmpty);
  }

  /** The chunk's last row's key, a Buffer of its own. */
  private lastRowKey(): Buffer {
    const key = this.lastKey;
    if (key === undefined) throw new Error('ChunkRenderer: a chunk of compactRowAt rows names no last row (takeOwnedChunk takes it)');
    return Buffer.from(this.lastKeyEscaped ? rowKeyOf(key, key.length) : key);
  }

  private kept(written: boolean, key: Buffer | undefined, escaped: boolean): boolean {
    if (written) {
      this.keptRows++;
      this.keptCells += this.out.rowCells;
      this.lastKey = key;
      this.lastKeyEscaped = escaped;
      this.lastStart = this.out.rowStart;
    }
    return written;
  }

  // ---------------------------------------------------------------- columns

  private columnOf(key: Buffer, rowEnd: number): Column {
    const len = key.length - TS_BYTES - rowEnd;
    const last = this.last;
    if (last !== undefined) {
      if (sameBytes(last.bytes, key, rowEnd, len)) return last;
      // The column after the last one, as in the previous row: one comparison instead of a search
      // (columnOf was 4.5% of a scan thread's profile with the search).
      const predicted = last.follower;
      if (predicted !== undefined && sameBytes(predicted.bytes, key, rowEnd, len)) {
        this.last = predicted;
        return predicted;
      }
    }
    let found: Column | undefined;
    for (const c of this.columns) {
      if (c !== last && sameBytes(c.bytes, key, rowEnd, len)) {
        found = c;
        break;
      }
    }
    if (found === undefined) {
      let i = rowEnd;
      while (key[i] !== 0) i++;
      const family = key.toString('latin1', rowEnd, i);
      const qualifier = unescape(key, i + 1, key.length - TS_BYTES).toString('utf8');
      found = { bytes: Buffer.from(key.subarray(rowEnd, rowEnd + len)), family, qualifier, doc: docColumn(family, qualifier) };
      if (this.columns.length < COLUMN_CACHE) this.columns.push(found);
    }
    if (last !== undefined) last.follower = found;
    this.last = found;
    return found;
  }
}

/** `b[0, length)` in an ArrayBuffer of its own. */
function copyOf(b: Buffer, length: number): ArrayBuffer {
  const ab = new ArrayBuffer(length);
  new Uint8Array(ab).set(b.subarray(0, length));
  return ab;
}

function sameBytes(col: Buffer, key: Buffer, at: number, len: number): boolean {
  if (col.length !== len) return false;
  for (let i = 0; i < len; i++) if (col[i] !== key[at + i]) return false;
  return true;
}

/** What renderChunk fills: a ChunkRenderer, or another format's encoder (avro-chunk.ts). */
export interface ChunkWriter extends RowVisitor {
  /** Bytes written since the last chunk was taken. */
  readonly length: number;
  takeChunk(): RenderedChunk | undefined;
}

/**
 * Renders the cursor's next rows into one chunk of about `chunkBytes` (rows without a selected
 * cell are dropped and not counted); undefined when the range is exhausted. The single-thread
 * scan's walk; the scan workers walk keys and values in place (scan-worker.ts) and share the
 * ChunkRenderer, so both produce the same bytes.
 */
export function renderChunk(cursor: ScanCursor, renderer: ChunkWriter, chunkBytes: number): RenderedChunk | undefined {
  while (renderer.length < chunkBytes && cursor.remaining > 0) {
    const kept = cursor.nextRow(renderer);
    if (kept === undefined) {
      cursor.remaining = 0;
      break;
    }
    if (kept) cursor.remaining--;
  }
  return renderer.takeChunk();
}
