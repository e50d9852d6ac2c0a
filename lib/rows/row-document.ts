/**
 * The row document: the one writer of what a row looks like on the wire, in every revision.
 *
 *   {"entityId":<id>,"cells":{"<family>":{"<qualifier>":[<cell>,<cell>],"<q2>":[...]},"<f2>":{...}}}
 *   <cell> = {"timestamp":<ts>,"value":<value JSON>,"writer_schema":<schema id>}
 *
 * Revision 3 writes the entity id as a JSON array of components (or a `rowkey=` string),
 * revisions 1 and 2 as the shell form in a JSON string; revision 1 cells have no writer_schema
 * (lib/rows/dialect.ts says which revision does what). Every piece is compact JSON in which CR and
 * LF can only appear escaped, so the framing's terminator (CR LF for the row stream, LF for
 * NDJSON) never occurs inside a document.
 *
 * Everything that renders rows writes through RowDocumentWriter: the reference pipeline's
 * serialize stage (lib/rows/stages/serialize.ts) from row objects, and the LMDB store's fused scan
 * loop (lib/store/lmdb/chunk-render.ts) from stored bytes. It writes bytes into one growing buffer,
 * with no string per cell: a scan writes millions of cells.
 */
import { copyBytes } from '../bytes/copy-bytes.js';
import { readU32BE } from '../bytes/read-u32be.js';
import { formatEntityIdJson, formatShellEntityId } from '../model/keys/entity-id.js';
import type { RowKeyFormat, Timestamp } from '../model/types.js';

/** How rows are rendered: the entity id form and whether cells carry writer_schema (a dialect's renderSpec). */
export interface RowRenderSpec {
  /**
   * `json` = revision 3 (a JSON array of components, or a `rowkey=` string), `shell` = revisions 1
   * and 2 (the shell form as a JSON string). Plain data, so a scan can be rendered on worker threads.
   */
  readonly entityIdForm: 'json' | 'shell';
  /** Cells carry writer_schema (revisions 2 and 3). */
  readonly withSchema: boolean;
}

/** What ends each row in a stream: CR LF (the row stream, KijiREST's framing) or LF (NDJSON). */
export type RowTerminator = '\r\n' | '\n';

/** A fused renderer's whole spec: the document and the framing compiled into one loop. */
export interface FramedRenderSpec extends RowRenderSpec {
  readonly terminator: RowTerminator;
}

/** The entity id of a row key as compact JSON text, in the form a RowRenderSpec names. */
export function entityIdText(format: RowKeyFormat, form: RowRenderSpec['entityIdForm']): (rowKey: Buffer) => string {
  return form === 'json' ? (k) => formatEntityIdJson(format, k) : (k) => JSON.stringify(formatShellEntityId(format, k));
}

/**
 * Writes a row's entity id straight into the output: `write(out, p, key, start, end)` puts the id
 * of the row key `key[start, end)` at `p` and answers the new position, or -1 where it has no
 * fast path and the caller writes entityIdText's text instead (same bytes). The fast path is
 * revision 3's id of a FORMATTED key whose components are plain (STRING of printable ASCII
 * without quote or backslash, INTEGER, LONG within 2^53): a scan writes one per row, and the text
 * path (decode, an array of components, a string) cost 350 ns of a row's 1 us on a scan thread.
 * Room for 3 bytes a key byte plus 32 must be reserved.
 */
export interface EntityIdBytes {
  write(out: Buffer, p: number, key: Uint8Array, start: number, end: number): number;
}

const NO_FAST_PATH: EntityIdBytes = { write: () => -1 };

export function entityIdBytes(format: RowKeyFormat, form: RowRenderSpec['entityIdForm']): EntityIdBytes {
  if (form !== 'json' || format.encoding !== 'FORMATTED' || format.suppressMaterialization) return NO_FAST_PATH;
  const types = format.components.map((c) => (c.type === 'STRING' ? 0 : c.type === 'INTEGER' ? 1 : 2));
  const hashSize = format.hashSize;
  const required = format.nullableStartIndex;
  return {
    write(out, p, key, start, end) {
      out[p++] = 0x5b; // [
      let pos = start + hashSize;
      let i = 0;
      for (; i < types.length && pos < end; i++) {
        if (i > 0) out[p++] = 0x2c; // ,
        const type = types[i]!;
        if (type === 0) {
          out[p++] = 0x22; // "
          for (;;) {
            if (pos >= end) return -1; // no terminator: not a key of this format
            const b = key[pos++]!;
            if (b === 0) break;
            if (b < 0x20 || b > 0x7e || b === 0x22 || b === 0x5c) return -1; // needs escaping or UTF-8 decoding
            out[p++] = b;
          }
          out[p++] = 0x22;
        } else if (type === 1) {
          if (pos + 4 > end) return -1;
          p = writeSafeInteger(out, p, (readU32BE(key, pos) ^ 0x80000000) | 0);
          pos += 4;
        } else {
          if (pos + 8 > end) return -1;
          // The sign bit flipped back: a signed high word; within +-2^53 the value is an exact double.
          const high = (readU32BE(key, pos) ^ 0x80000000) | 0;
          if (high < -0x20_0000 || high >= 0x20_0000) return -1;
          p = writeSafeInteger(out, p, high * 0x1_0000_0000 + readU32BE(key, pos + 4));
          pos += 8;
        }
      }
      if (pos !== end || i < required) return -1;
      for (; i < types.length; i++) {
        if (i > 0) out[p++] = 0x2c;
        out[p++] = 0x6e; // null
        out[p++] = 0x75;
        out[p++] = 0x6c;
        out[p++] = 0x6c;
      }
      out[p++] = 0x5d; // ]
      return p;
    },
  };
}

/**
 * A column's glue in a document, built once per column and reused for every row: what goes before
 * a cell's timestamp when the cell opens the row's cells, follows another family, or follows
 * another qualifier of the same family, each with the previous cell's closing bytes in front (by
 * that cell's writer schema), so that a cell costs one copy of glue. Six small copies a cell were
 * most of a scan thread's time (1,000,000 bench rows). The joined glue depends on whether cells
 * carry writer_schema: a column serves writers of one render spec.
 */
export interface DocColumn {
  readonly family: string;
  /**
   * `,"cells":{"family":{"qualifier":[{"timestamp":`: the row's cells map opens with its first
   * cell's glue (one copy a row fewer; an empty row closes with `,"cells":{}}`).
   */
  readonly first: Buffer;
  /** `]},"family":{"qualifier":[{"timestamp":` */
  readonly nextFamily: Buffer;
  /** `],"qualifier":[{"timestamp":` */
  readonly nextQualifier: Buffer;
  /** The previous cell's tail, then nextFamily / nextQualifier, by tail index (made when first needed). */
  readonly afterFamily: (Buffer | undefined)[];
  readonly afterQualifier: (Buffer | undefined)[];
}

/** What opens a row's cells map, written with the row's first cell (DocColumn.first) or its empty close. */
const CELLS_OPEN = ',"cells":{';

export function docColumn(family: string, qualifier: string): DocColumn {
  const q = JSON.stringify(qualifier);
  const open = `${JSON.stringify(family)}:{${q}:[{"timestamp":`;
  return {
    family,
    first: Buffer.from(`${CELLS_OPEN}${open}`, 'utf8'),
    nextFamily: Buffer.from(`]},${open}`, 'utf8'),
    nextQualifier: Buffer.from(`],${q}:[{"timestamp":`, 'utf8'),
    afterFamily: [],
    afterQualifier: [],
  };
}

/**
 * The glue of a run of cells, one of each of a sequence of columns from a row's first cell on,
 * made once (RowDocumentWriter.cellRun) and reused for every row of that shape: a table's rows
 * mostly hold the same columns with the same writer schemas, and a row's cells then cost one
 * call and one reserve instead of one each, and no choice of glue: the bench's scan ran at
 * 1.79M rows/s against 1.72M a cell at a time (same minute, BENCH_ONLY=1).
 */
export interface CellRun {
  /** Before each cell: the previous cell's tail (none for the first), then the column's glue. */
  readonly glue: readonly Buffer[];
  readonly glueBytes: number;
  readonly last: DocColumn;
  readonly lastTail: number;
}

/** DocColumns by family and qualifier, made once each (bounded: a map family can have any number of qualifiers). */
export class DocColumns {
  private readonly byName = new Map<string, DocColumn>();

  of(family: string, qualifier: string): DocColumn {
    const id = `${family}\0${qualifier}`;
    let column = this.byName.get(id);
    if (column === undefined) {
      column = docColumn(family, qualifier);
      if (this.byName.size >= 10_000) this.byName.clear();
      this.byName.set(id, column);
    }
    return column;
  }
}

const enc = (s: string): Buffer => Buffer.from(s, 'latin1');
const ROW_OPEN = enc('{"entityId":');
const NEXT_VERSION = ',{"timestamp":';
const VALUE = enc(',"value":');
const ROW_CLOSE_WITH_CELLS = ']}}}';
const ROW_CLOSE_EMPTY = enc(`${CELLS_OPEN}}}`);
/** Tails (a cell's closing bytes, by writer schema) whose joined glue is kept; a cell of a larger schema id joins its own. */
const TAILS = 1024;
/** Room a timestamp's digits need at most (a Java long: 19). */
const TIMESTAMP_ROOM = 20;
/** No cell written yet in the row. */
const NONE = -1;

export class RowDocumentWriter {
  pos = 0;
  /** Cells of the row being written. */
  rowCells = 0;
  /** Where the row being written (or the last one written) starts. */
  rowStart = 0;
  private rowColumn: DocColumn | undefined;
  /** The tail the row's last cell still owes (written with the next glue or at the row's end): its index, or NONE. */
  private tail = NONE;
  /** The row's last timestamp and where its `<digits>,"value":` sit in the output (a row's cells mostly share one). */
  private rowTimestamp: Timestamp = -1;
  private stampAt = 0;
  private stampLength = 0;
  private readonly withSchema: boolean;
  private readonly terminator: string;
  /** By tail index: the tail, then `,{"timestamp":` (the next version of the same column) / the row's close and terminator. */
  private readonly nextVersion: (Buffer | undefined)[] = [];
  private readonly closes: (Buffer | undefined)[] = [];
  private readonly emptyClose: Buffer;
  /**
   * A DataView of `buf`, through which cellsOfRun moves a row's repeated timestamp and the values
   * as 32-bit words, inline (TurboFan compiles DataView access to plain loads and stores): a 22-byte
   * move takes ~7 ns this way against ~13 ns for copyWithin (a call into the runtime) and ~16 ns
   * for a byte loop.
   */
  private view: DataView<ArrayBufferLike> = new DataView(new ArrayBuffer(0));
  private viewOf: Buffer | undefined;

  /** `terminator`: written after each row ('' for documents framed by a later stage). */
  constructor(
    public buf: Buffer,
    spec: RowRenderSpec,
    terminator: RowTerminator | '' = '',
  ) {
    this.withSchema = spec.withSchema;
    this.terminator = terminator;
    this.emptyClose = Buffer.concat([ROW_CLOSE_EMPTY, enc(terminator)]);
  }

  /** Opens a row: `{"entityId":<id>` (the cells map opens with the first cell, or closes empty). */
  beginRow(entityId: string): void {
    this.startRow();
    this.reserve(ROW_OPEN.length + entityId.length * 3);
    const out = this.buf;
    out.set(ROW_OPEN, this.pos);
    const p = this.pos + ROW_OPEN.length;
    this.pos = p + out.write(entityId, p, 'utf8');
  }

  /**
   * Opens a row whose entity id is that of `key[start, end)`: written by `ids` from the key's
   * bytes where it can, else `text(rowKey)` of a copy of those bytes (the same id, as text): the
   * caller passes one function made once, not a closure per row.
   */
  beginRowKey(ids: EntityIdBytes, key: Uint8Array, start: number, end: number, text: (rowKey: Buffer) => string): void {
    this.reserve(ROW_OPEN.length + (end - start) * 3 + 32);
    const out = this.buf;
    const p = ids.write(out, this.pos + ROW_OPEN.length, key, start, end);
    if (p < 0) return this.beginRow(text(Buffer.from(key.subarray(start, end))));
    this.startRow();
    out.set(ROW_OPEN, this.pos);
    this.pos = p;
  }

  private startRow(): void {
    this.rowStart = this.pos;
    this.rowColumn = undefined;
    this.rowCells = 0;
    this.tail = NONE;
    this.rowTimestamp = -1;
  }

  /** A cell whose value JSON is `src[start, end)`. */
  cellBytes(col: DocColumn, timestamp: Timestamp, src: Uint8Array, start: number, end: number, schemaId: number): void {
    const glue = this.glueOf(col, schemaId);
    // One check for the whole cell, then copies without one: the glue with set() (a native copy of
    // a whole array, ~13 ns), the timestamp's bytes once a row, the value byte by byte (short, and a
    // view of it for set() would cost an object). A bench row of 5 cells renders in ~460 ns on a
    // scan thread this way, against ~1,330 ns with a copy call per piece and no joined glue.
    this.reserve(glue.length + TIMESTAMP_ROOM + VALUE.length + (end - start));
    const out = this.buf;
    out.set(glue, this.pos);
    this.pos = copyBytes(out, this.stamp(out, this.pos + glue.length, timestamp), src, start, end);
  }

  /** A cell whose value JSON is `json`. */
  cellText(col: DocColumn, timestamp: Timestamp, json: string, schemaId: number): void {
    const glue = this.glueOf(col, schemaId);
    this.reserve(glue.length + TIMESTAMP_ROOM + VALUE.length + json.length * 3);
    const out = this.buf;
    out.set(glue, this.pos);
    const p = this.stamp(out, this.pos + glue.length, timestamp);
    this.pos = p + out.write(json, p, 'utf8');
  }

  /** The glue of a run of cells of `columns` (one cell each, the i-th of writer schema `schemaIds[i]`), for cellsOfRun. */
  cellRun(columns: readonly DocColumn[], schemaIds: readonly number[]): CellRun {
    const glue: Buffer[] = [];
    let tail = NONE;
    let current: DocColumn | undefined;
    columns.forEach((col, i) => {
      glue.push(this.glueAfter(current, tail, col));
      current = col;
      tail = this.withSchema ? schemaIds[i]! : 0;
    });
    return { glue, glueBytes: glue.reduce((n, g) => n + g.length, 0), last: current!, lastTail: tail };
  }

  /**
   * The row's cells, the run's columns in order, as cellBytes one by one would write them: the
   * i-th's value is `src[starts[i], ends[i])` at `stamps[i]` (a safe integer); `srcView` is a
   * DataView of exactly `src`. The row must have no cell yet; `ends[n - 1] - starts[0]` bounds the
   * value bytes (they lie in one stored row).
   */
  cellsOfRun(run: CellRun, src: Uint8Array, srcView: DataView<ArrayBufferLike>, starts: Int32Array, ends: Int32Array, stamps: Float64Array): void {
    const glues = run.glue;
    const n = glues.length;
    this.reserve(run.glueBytes + n * (TIMESTAMP_ROOM + VALUE.length) + ends[n - 1]! - starts[0]!);
    const out = this.buf;
    const view = this.viewOfBuf();
    let p = this.pos;
    let stamp = -1;
    let stampAt = 0;
    let stampEnd = 0;
    for (let i = 0; i < n; i++) {
      const glue = glues[i]!;
      out.set(glue, p);
      p += glue.length;
      const timestamp = stamps[i]!;
      if (timestamp === stamp) {
        // The row's timestamp and `,"value":` again (22 bytes for the bench's), moved as words,
        // inline: rendering ran 440 -> 370 ns a bench row with this and the cells map opened by
        // the first glue, against copyWithin (100,000 rows alternated in one process).
        const length = stampEnd - stampAt;
        let k = 0;
        for (; k + 4 <= length; k += 4) view.setUint32(p + k, view.getUint32(stampAt + k, true), true);
        for (; k < length; k++) out[p + k] = out[stampAt + k]!;
        p += length;
      } else {
        stampAt = p;
        p = writeSafeInteger(out, p, timestamp);
        out.set(VALUE, p);
        p += VALUE.length;
        stampEnd = p;
        stamp = timestamp;
      }
      // The value as words too (srcView is a view of src): 2-5% of the render against copyBytes.
      const start = starts[i]!;
      const length = ends[i]! - start;
      let k = 0;
      for (; k + 4 <= length; k += 4) view.setUint32(p + k, srcView.getUint32(start + k, true), true);
      for (; k < length; k++) out[p + k] = src[start + k]!;
      p += length;
    }
    this.pos = p;
    this.rowCells = n;
    this.rowColumn = run.last;
    this.tail = run.lastTail;
    this.rowTimestamp = stamp;
    this.stampAt = stampAt;
    this.stampLength = stampEnd - stampAt;
  }

  /**
   * Closes the row and writes the terminator. A row without cells is taken back (scans return only
   * rows with a selected cell) unless `keepEmpty` (point gets answer every row asked for). Returns
   * whether the row was written.
   */
  endRow(keepEmpty: boolean): boolean {
    if (this.rowCells === 0) {
      if (!keepEmpty) {
        this.pos = this.rowStart;
        return false;
      }
      this.bytes(this.emptyClose);
      return true;
    }
    const i = this.tail;
    this.bytes((i < TAILS ? this.closes[i] : undefined) ?? this.joined(this.closes, i, ROW_CLOSE_WITH_CELLS + this.terminator));
    return true;
  }

  // ---------------------------------------------------------------- cells

  /** The glue before a cell: the owed tail of the previous cell, then the column's glue by where the cell falls. */
  private glueOf(col: DocColumn, schemaId: number): Buffer {
    const glue = this.glueAfter(this.rowColumn, this.tail, col);
    this.tail = this.withSchema ? schemaId : 0;
    this.rowCells++;
    this.rowColumn = col;
    return glue;
  }

  /** The glue before a cell of `col` after a cell of `current` that owes tail `owed` (NONE: the row's first cell). */
  private glueAfter(current: DocColumn | undefined, owed: number, col: DocColumn): Buffer {
    if (owed === NONE) return col.first;
    if (col === current) return (owed < TAILS ? this.nextVersion[owed] : undefined) ?? this.joined(this.nextVersion, owed, NEXT_VERSION);
    const family = col.family !== current!.family;
    const cache = family ? col.afterFamily : col.afterQualifier;
    return (owed < TAILS ? cache[owed] : undefined) ?? this.joined(cache, owed, (family ? col.nextFamily : col.nextQualifier).toString('utf8'));
  }

  /** The tail of index `i` (`,"writer_schema":<id>}`, or `}` without writer_schema) then `after`, kept in `cache` when `i` is small. */
  private joined(cache: (Buffer | undefined)[], i: number, after: string): Buffer {
    const bytes = Buffer.from(`${this.withSchema ? `,"writer_schema":${i}}` : '}'}${after}`, 'utf8');
    if (i < TAILS) cache[i] = bytes;
    return bytes;
  }

  /** `<timestamp digits>,"value":` at `p` (room reserved): copied from the row's earlier cell of the same timestamp. */
  private stamp(out: Buffer, p: number, timestamp: Timestamp): number {
    if (timestamp === this.rowTimestamp) {
      out.copyWithin(p, this.stampAt, this.stampAt + this.stampLength);
      return p + this.stampLength;
    }
    const end = writeTimestamp(out, p, timestamp);
    out.set(VALUE, end);
    this.rowTimestamp = timestamp;
    this.stampAt = p;
    this.stampLength = end + VALUE.length - p;
    return end + VALUE.length;
  }

  // ---------------------------------------------------------------- output

  /** The DataView of `buf` (made again when the buffer was replaced). */
  private viewOfBuf(): DataView<ArrayBufferLike> {
    const out = this.buf;
    if (this.viewOf !== out) {
      this.view = new DataView(out.buffer, out.byteOffset, out.byteLength);
      this.viewOf = out;
    }
    return this.view;
  }

  /** Makes room for `n` more bytes (the buffer doubles). */
  reserve(n: number): void {
    if (this.pos + n <= this.buf.length) return;
    const bigger = Buffer.allocUnsafe(Math.max(this.buf.length * 2, this.pos + n));
    this.buf.copy(bigger, 0, 0, this.pos);
    this.buf = bigger;
  }

  private bytes(src: Buffer): void {
    this.reserve(src.length);
    this.buf.set(src, this.pos);
    this.pos += src.length;
  }
}

/**
 * A timestamp's decimal digits at `p` (room reserved); the new position. Safe integers as two
 * int32 halves, two digits per step from a table (the Math.floor-per-digit loop was 5.7% of a scan
 * thread's profile); longs above 2^53 (bigints) as their text.
 */
function writeTimestamp(out: Buffer, p: number, timestamp: Timestamp): number {
  return typeof timestamp === 'number' ? writeSafeInteger(out, p, timestamp) : p + out.write(timestamp.toString(), p, 'latin1');
}

/** A safe integer's decimal digits at `p`, with a minus sign when negative; the new position. */
function writeSafeInteger(out: Buffer, p: number, n: number): number {
  if (n < 0) {
    out[p++] = 0x2d; // -
    n = -n;
  }
  if (n < 1e8) return writeSmall(out, p, n | 0);
  const high = Math.floor(n / 1e8);
  return writeEight(out, writeSmall(out, p, high), n - high * 1e8);
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
