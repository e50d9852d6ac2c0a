/**
 * The fast path's renderer (scans and point gets): writes rows straight from LMDB key and value
 * bytes into one output Buffer per batch, in exactly the bytes lib/rows/row-format.ts produces,
 * without a CellOut object or a JavaScript string per cell. A compact row (one entry) is rendered
 * by CompactRenderer, mostly as one copy of its stored text; the cells of a spilled or legacy row
 * (cell entries) one by one here: values are stored as wire JSON (../cell-value.ts), so a cell costs a
 * byte copy, the timestamp digits and the precomputed column fragments.
 *
 * Column identity is found by comparing key bytes with a small per-scan cache of the columns seen
 * so far, so family and qualifier strings are decoded once per column, not once per cell.
 */
import type { ReadSpec, TableLayout } from '../../model/types.js';
import { CellPicker } from '../cell-picker.js';
import { entityIdText, type RenderedChunk, type RowRenderSpec } from '../store.js';
import type { RowVisitor, ScanCursor } from './scan-cursor.js';
import { readInvertedTimestamp, unescape } from './cell-key.js';
import { COUNTER_SCHEMA_ID, valueJsonStart, valueSchemaId } from '../cell-value.js';
import { CompactRenderer, type RenderOut } from './compact-render.js';

const TS_BYTES = 8;
const KIND_COUNTER = 2;
/** Columns remembered per scan; a map family with more distinct qualifiers decodes the rest. */
const COLUMN_CACHE = 256;

interface Column {
  /** `family 00 esc(qualifier) 00 00` as stored in the key. */
  readonly bytes: Buffer;
  readonly family: string;
  readonly qualifier: string;
  /** `"family":{"qualifier":[` */
  readonly openFamily: Buffer;
  /** `],"qualifier":[` */
  readonly nextQualifier: Buffer;
  /** The column that came after this one last time: rows of a table mostly repeat one column order. */
  follower?: Column;
}

const enc = (s: string): Buffer => Buffer.from(s, 'utf8');
const ROW_OPEN = enc('{"entityId":');
const CELLS_OPEN = enc(',"cells":{');
const FAMILY_CLOSE_COMMA = enc(']},');
const CELL_OPEN_FIRST = enc('{"timestamp":');
const CELL_OPEN_NEXT = enc(',{"timestamp":');
const VALUE = enc(',"value":');
const SCHEMA = enc(',"writer_schema":');
const ROW_CLOSE_WITH_CELLS = enc(']}}}\r\n');
const ROW_CLOSE_EMPTY = enc('}}\r\n');

export class ChunkRenderer implements RenderOut, RowVisitor {
  buf: Buffer;
  pos = 0;
  private readonly columns: Column[] = [];
  private last: Column | undefined;
  // Per-row state.
  private rowFamily: string | undefined;
  private rowColumn: Column | undefined;
  private rowCells = 0;
  /** Rows kept, and their cells, since the last takeChunk(). */
  private keptRows = 0;
  private keptCells = 0;
  private rowStart = 0;
  private readonly entityId: (rowKey: Buffer) => string;
  private readonly withSchema: boolean;
  private readonly picker: CellPicker;
  private readonly compact: CompactRenderer;

  /** `spares`: where a buffer comes from before a new one is made (scan workers keep the ones given back). */
  constructor(
    layout: TableLayout,
    read: ReadSpec,
    spec: RowRenderSpec,
    now: number = Date.now(),
    initialBytes = 512 * 1024,
    private readonly spares?: (bytes: number) => Buffer | undefined,
  ) {
    this.buf = spares?.(initialBytes) ?? Buffer.allocUnsafeSlow(initialBytes);
    this.picker = new CellPicker(layout, read, now);
    this.compact = new CompactRenderer(layout, read, spec, now);
    this.entityId = entityIdText(layout.keyFormat, spec.entityIdForm);
    this.withSchema = spec.withSchema;
  }

  get length(): number {
    return this.pos;
  }

  /**
   * Hands out the rows rendered so far in the renderer's own buffer (an ArrayBuffer that can be
   * transferred to another thread without a copy; `length` bytes of it are used) and starts a new
   * buffer; undefined when no row was kept.
   */
  takeOwnedChunk(): { buffer: ArrayBuffer; length: number; rows: number; cells: number } | undefined {
    if (this.keptRows === 0) return undefined;
    const buf = this.buf;
    const chunk = { buffer: buf.buffer as ArrayBuffer, length: this.pos, rows: this.keptRows, cells: this.keptCells };
    // A buffer of its own (allocUnsafe pools only small buffers): moving it moves nothing else.
    this.buf = this.spares?.(buf.length) ?? Buffer.allocUnsafeSlow(buf.length);
    this.pos = 0;
    this.keptRows = 0;
    this.keptCells = 0;
    return buf.byteOffset === 0 && buf.buffer.byteLength === buf.length ? chunk : { ...chunk, buffer: copyOf(buf, chunk.length) };
  }

  /** Drops whatever was rendered and not taken (a reused renderer starts clean even after a failure). */
  reset(): void {
    this.pos = 0;
    this.keptRows = 0;
    this.keptCells = 0;
  }

  /** Hands out the rows rendered so far (undefined when none was kept) and starts a new chunk. */
  takeChunk(): RenderedChunk | undefined {
    if (this.keptRows === 0) return undefined;
    // Copied out without a view of the range first (a subarray object a point get did not need).
    const bytes = Buffer.allocUnsafe(this.pos);
    this.buf.copy(bytes, 0, 0, this.pos);
    const chunk = { bytes, rows: this.keptRows, cells: this.keptCells };
    this.pos = 0;
    this.keptRows = 0;
    this.keptCells = 0;
    return chunk;
  }

  beginRow(rowKey: Buffer): void {
    this.picker.beginRow();
    this.rowStart = this.pos;
    this.rowFamily = undefined;
    this.rowColumn = undefined;
    this.rowCells = 0;
    this.bytes(ROW_OPEN);
    this.text(this.entityId(rowKey));
    this.bytes(CELLS_OPEN);
  }

  /** Renders the cell when the picker keeps it; its value is `value[0, valueEnd)`. */
  cell(key: Buffer, rowEnd: number, value: Buffer, valueEnd: number = value.length): void {
    const col = this.columnOf(key, rowEnd);
    const tsPos = key.length - TS_BYTES;
    const timestamp = readInvertedTimestamp(key, tsPos);
    if (!this.picker.keep(col.family, col.qualifier, timestamp)) return;
    if (col !== this.rowColumn) {
      if (this.rowColumn === undefined) {
        this.bytes(col.openFamily);
      } else if (col.family !== this.rowFamily) {
        this.bytes(FAMILY_CLOSE_COMMA);
        this.bytes(col.openFamily);
      } else {
        this.bytes(col.nextQualifier);
      }
      this.rowFamily = col.family;
      this.rowColumn = col;
      this.bytes(CELL_OPEN_FIRST);
    } else {
      this.bytes(CELL_OPEN_NEXT);
    }
    this.rowCells++;
    if (typeof timestamp === 'number') this.digits(timestamp);
    else this.text(timestamp.toString());
    this.bytes(VALUE);
    let schemaId: number;
    if (value[0] === KIND_COUNTER) {
      this.text(value.readBigInt64BE(1).toString());
      schemaId = COUNTER_SCHEMA_ID;
    } else {
      schemaId = valueSchemaId(value);
      this.copy(value, valueJsonStart(value), valueEnd);
    }
    if (this.withSchema) {
      this.bytes(SCHEMA);
      this.digits(schemaId);
    }
    this.byte(0x7d); // }
  }

  /**
   * Ends the row; a row without kept cells is taken back (scans), or written with empty cells when
   * `keepEmpty` (point gets answer every row asked for). Returns whether the row was written.
   */
  endRow(keepEmpty = false): boolean {
    if (this.rowCells === 0) {
      if (!keepEmpty) {
        this.pos = this.rowStart;
        return false;
      }
      this.bytes(ROW_CLOSE_EMPTY);
    } else {
      this.bytes(ROW_CLOSE_WITH_CELLS);
    }
    this.keptRows++;
    this.keptCells += this.rowCells;
    return true;
  }

  /** A row asked for that does not exist: its entity id with empty cells (point gets). */
  missingRow(rowKey: Buffer): void {
    this.beginRow(rowKey);
    this.endRow(true);
  }

  /**
   * Renders a compact row (compact-row.ts) held in `value`; `key` is its row key, or with
   * `escaped` its entry's key (the row prefix). Returns whether it was written.
   */
  compactRow(key: Buffer, value: Buffer, keepEmpty = false, escaped = false): boolean {
    if (!this.compact.render(this, key, escaped, value, keepEmpty)) return false;
    this.keptRows++;
    this.keptCells += this.compact.cells;
    return true;
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
      const q = JSON.stringify(qualifier);
      found = {
        bytes: Buffer.from(key.subarray(rowEnd, rowEnd + len)),
        family,
        qualifier,
        openFamily: enc(`${JSON.stringify(family)}:{${q}:[`),
        nextQualifier: enc(`],${q}:[`),
      };
      if (this.columns.length < COLUMN_CACHE) this.columns.push(found);
    }
    if (last !== undefined) last.follower = found;
    this.last = found;
    return found;
  }

  // ---------------------------------------------------------------- output

  reserve(n: number): void {
    if (this.pos + n <= this.buf.length) return;
    const bigger = Buffer.allocUnsafe(Math.max(this.buf.length * 2, this.pos + n));
    this.buf.copy(bigger, 0, 0, this.pos);
    this.buf = bigger;
  }

  private byte(b: number): void {
    this.reserve(1);
    this.buf[this.pos++] = b;
  }

  private bytes(src: Buffer): void {
    this.copy(src, 0, src.length);
  }

  private copy(src: Buffer, start: number, end: number): void {
    const n = end - start;
    this.reserve(n);
    const out = this.buf;
    let p = this.pos;
    if (n < 48) {
      for (let i = start; i < end; i++) out[p++] = src[i]!;
    } else {
      src.copy(out, p, start, end);
      p += n;
    }
    this.pos = p;
  }

  private text(s: string): void {
    const max = s.length * 3;
    this.reserve(max);
    this.pos += this.buf.write(s, this.pos, 'utf8');
  }

  /**
   * A non-negative safe integer in decimal. Timestamps (13 digits) are the common case: written as
   * two int32 halves, two digits per step from a table (the Math.floor-per-digit loop was 5.7% of a
   * scan thread's profile).
   */
  private digits(n: number): void {
    this.reserve(16);
    if (n < 1e8) {
      this.pos = writeSmall(this.buf, this.pos, n | 0);
      return;
    }
    const high = Math.floor(n / 1e8);
    this.pos = writeSmall(this.buf, this.pos, high);
    this.pos = writeEight(this.buf, this.pos, n - high * 1e8);
  }
}

/** `b[0, length)` in an ArrayBuffer of its own. */
function copyOf(b: Buffer, length: number): ArrayBuffer {
  const ab = new ArrayBuffer(length);
  new Uint8Array(ab).set(b.subarray(0, length));
  return ab;
}

/** "00" .. "99" as ASCII pairs. */
const PAIRS = Buffer.from(Array.from({ length: 100 }, (_, i) => String(i).padStart(2, '0')).join(''), 'latin1');

/** Writes 0 <= n < 1e8 without leading zeros; returns the new position. */
function writeSmall(out: Buffer, pos: number, n: number): number {
  let len = 1;
  for (let x = n; x >= 10; x = (x / 10) | 0) len++;
  let p = pos + len;
  let x = n;
  while (x >= 100) {
    const q = (x / 100) | 0;
    const r = (x - q * 100) * 2;
    out[--p] = PAIRS[r + 1]!;
    out[--p] = PAIRS[r]!;
    x = q;
  }
  if (x >= 10) {
    out[--p] = PAIRS[x * 2 + 1]!;
    out[--p] = PAIRS[x * 2]!;
  } else {
    out[--p] = 0x30 + x;
  }
  return pos + len;
}

/** Writes 0 <= n < 1e8 as exactly eight digits; returns the new position. */
function writeEight(out: Buffer, pos: number, n: number): number {
  let x = n | 0;
  for (let p = pos + 6; p >= pos; p -= 2) {
    const q = (x / 100) | 0;
    const r = (x - q * 100) * 2;
    out[p] = PAIRS[r]!;
    out[p + 1] = PAIRS[r + 1]!;
    x = q;
  }
  return pos + 8;
}

function sameBytes(col: Buffer, key: Buffer, at: number, len: number): boolean {
  if (col.length !== len) return false;
  for (let i = 0; i < len; i++) if (col[i] !== key[at + i]) return false;
  return true;
}

/**
 * Renders the cursor's next rows into one chunk of about `chunkBytes` (rows without a selected
 * cell are dropped and not counted); undefined when the range is exhausted. The single-thread
 * scan's walk; the scan workers walk keys and values in place (scan-worker.ts) and share the
 * ChunkRenderer, so both produce the same bytes.
 */
export function renderChunk(cursor: ScanCursor, renderer: ChunkRenderer, chunkBytes: number): RenderedChunk | undefined {
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
