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

/** A column's glue in a document, built once per column and reused for every row. */
export interface DocColumn {
  readonly family: string;
  /** `"family":{"qualifier":[` */
  readonly openFamily: Buffer;
  /** `],"qualifier":[` */
  readonly nextQualifier: Buffer;
}

export function docColumn(family: string, qualifier: string): DocColumn {
  const q = JSON.stringify(qualifier);
  return { family, openFamily: Buffer.from(`${JSON.stringify(family)}:{${q}:[`, 'utf8'), nextQualifier: Buffer.from(`],${q}:[`, 'utf8') };
}

const enc = (s: string): Buffer => Buffer.from(s, 'latin1');
const ROW_OPEN = enc('{"entityId":');
const CELLS_OPEN = enc(',"cells":{');
const FAMILY_CLOSE_COMMA = enc(']},');
const CELL_OPEN_FIRST = enc('{"timestamp":');
const CELL_OPEN_NEXT = enc(',{"timestamp":');
const VALUE = enc(',"value":');
const SCHEMA = enc(',"writer_schema":');
const ROW_CLOSE_WITH_CELLS = enc(']}}}');
const ROW_CLOSE_EMPTY = enc('}}');

export class RowDocumentWriter {
  pos = 0;
  /** Cells of the row being written. */
  rowCells = 0;
  /** Where the row being written (or the last one written) starts. */
  rowStart = 0;
  private rowColumn: DocColumn | undefined;
  private readonly withSchema: boolean;
  private readonly terminator: Buffer;

  /** `terminator`: written after each row ('' for documents framed by a later stage). */
  constructor(
    public buf: Buffer,
    spec: RowRenderSpec,
    terminator: RowTerminator | '' = '',
  ) {
    this.withSchema = spec.withSchema;
    this.terminator = enc(terminator);
  }

  /** Opens a row: `{"entityId":<id>,"cells":{`. */
  beginRow(entityId: string): void {
    this.rowStart = this.pos;
    this.rowColumn = undefined;
    this.rowCells = 0;
    this.bytes(ROW_OPEN);
    this.text(entityId);
    this.bytes(CELLS_OPEN);
  }

  /** A cell whose value JSON is `src[start, end)`. */
  cellBytes(col: DocColumn, timestamp: Timestamp, src: Uint8Array, start: number, end: number, schemaId: number): void {
    this.openCell(col, timestamp);
    this.copy(src, start, end);
    this.closeCell(schemaId);
  }

  /** A cell whose value JSON is `json`. */
  cellText(col: DocColumn, timestamp: Timestamp, json: string, schemaId: number): void {
    this.openCell(col, timestamp);
    this.text(json);
    this.closeCell(schemaId);
  }

  /**
   * Closes the row and writes the terminator. A row without cells is taken back (scans return only
   * rows with a selected cell) unless `keepEmpty` (point gets answer every row asked for). Returns
   * whether the row was written.
   */
  endRow(keepEmpty: boolean): boolean {
    if (this.rowCells === 0 && !keepEmpty) {
      this.pos = this.rowStart;
      return false;
    }
    this.bytes(this.rowCells > 0 ? ROW_CLOSE_WITH_CELLS : ROW_CLOSE_EMPTY);
    this.bytes(this.terminator);
    return true;
  }

  // ---------------------------------------------------------------- cells

  /** The glue before a cell (a new family, a new qualifier, or the next version), then `{"timestamp":<ts>,"value":`. */
  private openCell(col: DocColumn, timestamp: Timestamp): void {
    if (col !== this.rowColumn) {
      if (this.rowColumn === undefined) {
        this.bytes(col.openFamily);
      } else if (col.family !== this.rowColumn.family) {
        this.bytes(FAMILY_CLOSE_COMMA);
        this.bytes(col.openFamily);
      } else {
        this.bytes(col.nextQualifier);
      }
      this.rowColumn = col;
      this.bytes(CELL_OPEN_FIRST);
    } else {
      this.bytes(CELL_OPEN_NEXT);
    }
    this.rowCells++;
    if (typeof timestamp === 'number') this.digits(timestamp);
    else this.text(timestamp.toString());
    this.bytes(VALUE);
  }

  private closeCell(schemaId: number): void {
    if (this.withSchema) {
      this.bytes(SCHEMA);
      this.digits(schemaId);
    }
    this.reserve(1);
    this.buf[this.pos++] = 0x7d; // }
  }

  // ---------------------------------------------------------------- output

  /** Makes room for `n` more bytes (the buffer doubles). */
  reserve(n: number): void {
    if (this.pos + n <= this.buf.length) return;
    const bigger = Buffer.allocUnsafe(Math.max(this.buf.length * 2, this.pos + n));
    this.buf.copy(bigger, 0, 0, this.pos);
    this.buf = bigger;
  }

  private bytes(src: Buffer): void {
    this.copy(src, 0, src.length);
  }

  /** Short copies byte by byte: Buffer.copy's call costs more than a loop below ~48 bytes. */
  private copy(src: Uint8Array, start: number, end: number): void {
    const n = end - start;
    this.reserve(n);
    const out = this.buf;
    let p = this.pos;
    if (n < 48) {
      for (let i = start; i < end; i++) out[p++] = src[i]!;
    } else {
      out.set(src.subarray(start, end), p);
      p += n;
    }
    this.pos = p;
  }

  private text(s: string): void {
    this.reserve(s.length * 3);
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
