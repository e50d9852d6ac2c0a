/**
 * An import line of the common shape written straight from its bytes into its compact row
 * (compact-row.ts), without JSON.parse, RowWrite objects or a RowModel: the general path
 * (parseExactJson, encodeRowInput, RowModel, encodeCompactRow) cost 7.5 us of a parsing thread's
 * 10.3 us a row (profile of 300,000 bench rows x 5 cells); this reads each byte once and takes
 * 3.4 us a row for the same rows, about 0.7 of it the entity id's row key through the general
 * path's functions.
 *
 * This module only finds a line's shape and its spans: ASCII only; `{"entityId": [...], "cells":
 * {family: {qualifier: [{"value": v, "timestamp": t}]}}}` with keys in any order, each once, and
 * JSON whitespace anywhere; one cell a column; names of printable characters without escapes. What
 * is valid is decided by the codec's own functions: a column takes this path when the cell codec
 * stores its values as written (cell-codec.ts plainColumnOf: string, long, int, double or boolean,
 * no writer_schema), a value or timestamp span when the codec accepts it as written
 * (lib/model/cells/plain-values.ts: the canonical text the codec prints), the entity id through
 * the general path's parseExactJson, entityIdFromBody and resolveEntityId, a cell's age against
 * its family's TTL and the row key against the store's limits as the general path checks them.
 * Anything else (including every bad line) answers 0, and the caller takes the general path,
 * which stores the row or names what is wrong with it; test/store/plain-line.test.ts compares the
 * bytes of both paths over many rows.
 */
import { plainColumnOf, type PlainColumn } from '../../model/cells/cell-codec.js';
import { digitsValue, plainStringClose, plainTimestampEnd, plainValueEnd } from '../../model/cells/plain-values.js';
import { entityIdFromBody, resolveEntityId } from '../../model/keys/entity-id.js';
import { parseExactJson, type JsonTextPlace } from '../../model/json/exact-json.js';
import type { FamilyLayout, SchemaTable, TableLayout } from '../../model/types.js';
import { expiryOf } from '../cell-picker.js';
import { cellKeyFits, rowPrefix } from './cell-key.js';
import { COLUMN_HEAD_BYTES, HEADER_BYTES, writeColumnHead, writeCompactHeader } from './compact-row.js';
import type { BatchPacker } from './prepared-batch.js';

const TAB = 0x09;
const LF = 0x0a;
const CR = 0x0d;
const SPACE = 0x20;
const QUOTE = 0x22;
const COMMA = 0x2c;
const OPEN_BRACKET = 0x5b;
const BACKSLASH = 0x5c;
const COLON = 0x3a;
const CLOSE_BRACKET = 0x5d;
const OPEN_BRACE = 0x7b;
const CLOSE_BRACE = 0x7d;

/** Cells a line may have here; a wider row takes the general path (the bench's rows have 5). */
const MAX_CELLS = 64;
/** Where the entity id sits in the line: inside the row object, as the general parser meets it. */
const ENTITY_ID_PLACE: JsonTextPlace = { offset: 0, depth: 1 };

const ascii = (s: string): Uint8Array => Buffer.from(s, 'latin1');
const ENTITY_ID = ascii('entityId');
const CELLS = ascii('cells');
const VALUE = ascii('value');
const TIMESTAMP = ascii('timestamp');

interface KnownColumn {
  readonly name: Uint8Array;
  /** undefined: any qualifier of a map family (read from the line when needed). */
  readonly qualifier: string | undefined;
  /** null: cells of this column take the general path. */
  readonly plain: PlainColumn | null;
}

const EMPTY = new Uint8Array(0);
/** Columns of a group family remembered (by their bytes); others are looked up in the layout each time. */
const MAX_KNOWN_COLUMNS = 1024;

interface KnownFamily {
  readonly name: Uint8Array;
  readonly family: string;
  readonly layout: FamilyLayout;
  /** Group family: the columns met so far (plain or not). */
  readonly columns: KnownColumn[];
  /** Map family: how its cells are written (undefined: not known yet). */
  map: KnownColumn | undefined;
  /** The row that last named this family (a family named twice in a line takes the general path). */
  seenInRow: number;
}

export class PlainLineEncoder {
  private readonly families: KnownFamily[] = [];
  private row = 0;

  // The line's cells, by index: family, column (a plain one), where its qualifier and value are in the line, timestamp (-1: none).
  private count = 0;
  private readonly cellFamily: KnownFamily[] = [];
  private readonly cellColumn: KnownColumn[] = [];
  private readonly qualifierStart = new Int32Array(MAX_CELLS);
  private readonly qualifierEnd = new Int32Array(MAX_CELLS);
  private readonly valueStart = new Int32Array(MAX_CELLS);
  private readonly valueEnd = new Int32Array(MAX_CELLS);
  private readonly timestamps = new Float64Array(MAX_CELLS);
  /** Where a timestamp given is in the line (-1: none given). */
  private readonly timestampStart = new Int32Array(MAX_CELLS);
  private readonly timestampEnd = new Int32Array(MAX_CELLS);
  private readonly order = new Int32Array(MAX_CELLS);

  private b: Buffer = Buffer.alloc(0);
  private end = 0;

  constructor(
    private readonly layout: TableLayout,
    private readonly schemas: SchemaTable,
    private readonly maxRowKeyBytes: number,
  ) {}

  /**
   * Appends the row of line `b[start, end)` to `packer` and answers its cells, or answers 0 and
   * appends nothing when the line is not one this takes (the general path then reads it).
   * Cells without a timestamp get `now`, as BatchPacker.add gives them.
   */
  add(b: Buffer, start: number, end: number, now: number, packer: BatchPacker): number {
    this.b = b;
    this.end = end;
    this.count = 0;
    this.row++;
    let entityStart = -1;
    let entityEnd = -1;
    let cellsSeen = false;
    let p = this.ws(start);
    if (b[p] !== OPEN_BRACE) return 0;
    p = this.ws(p + 1);
    for (;;) {
      if (b[p] !== QUOTE) return 0;
      if (this.isKey(p, ENTITY_ID)) {
        if (entityStart >= 0) return 0;
        p = this.colon(p + ENTITY_ID.length + 2);
        if (p < 0 || b[p] !== OPEN_BRACKET) return 0;
        entityStart = p;
        p = this.skipArray(p);
        entityEnd = p;
      } else if (this.isKey(p, CELLS)) {
        if (cellsSeen) return 0;
        cellsSeen = true;
        p = this.colon(p + CELLS.length + 2);
        if (p < 0) return 0;
        p = this.cells(p);
      } else return 0;
      if (p < 0) return 0;
      p = this.ws(p);
      if (b[p] === COMMA) p = this.ws(p + 1);
      else if (b[p] === CLOSE_BRACE) break;
      else return 0;
    }
    if (this.ws(p + 1) !== end || entityStart < 0 || this.count === 0) return 0;
    return this.write(entityStart, entityEnd, now, packer);
  }

  /** Encodes the row scanned; 0 when its key or cells need the general path after all. */
  private write(entityStart: number, entityEnd: number, now: number, packer: BatchPacker): number {
    const b = this.b;
    let rowKey: Buffer;
    try {
      const value = parseExactJson(b.toString('latin1', entityStart, entityEnd), 'the row', ENTITY_ID_PLACE);
      rowKey = resolveEntityId(this.layout.keyFormat, entityIdFromBody(value));
    } catch {
      return 0; // the general path names what is wrong with it
    }
    if (rowKey.length > this.maxRowKeyBytes) return 0;
    const n = this.count;
    if (!this.sortCells(n)) return 0;
    const order = this.order;
    let oldest = Infinity;
    let newest = -Infinity;
    for (let k = 0; k < n; k++) {
      const i = order[k]!;
      const fam = this.cellFamily[i]!;
      let ts = this.timestamps[i]!;
      if (ts < 0) ts = this.timestamps[i] = now;
      // A cell already past its family's TTL is dropped by the general path's trim.
      if (ts < expiryOf(fam.layout.ttlSeconds, now)) return 0;
      const qualifier = this.cellColumn[i]!.qualifier ?? b.toString('latin1', this.qualifierStart[i]!, this.qualifierEnd[i]!);
      if (!cellKeyFits(rowKey, fam.family, qualifier)) return 0;
      if (ts < oldest) oldest = ts;
      if (ts > newest) newest = ts;
    }

    // The compact row (compact-row.ts): one column record a cell, in stored order. Names and
    // values are printable ASCII without escapes here, so their bytes in the line are the stored
    // bytes: a name's UTF-8, a value's JSON text.
    const w = packer.beginRow(rowPrefix(rowKey));
    const base = w.pos;
    w.room(HEADER_BYTES);
    w.pos = base + HEADER_BYTES;
    let family: KnownFamily | undefined;
    for (let k = 0; k < n; k++) {
      const i = order[k]!;
      const fam = this.cellFamily[i]!;
      w.room(COLUMN_HEAD_BYTES);
      const head = w.pos;
      w.pos += COLUMN_HEAD_BYTES;
      const famBytes = fam !== family ? fam.name.length : 0;
      if (famBytes > 0) w.range(fam.name, 0, famBytes);
      family = fam;
      w.range(b, this.qualifierStart[i]!, this.qualifierEnd[i]!);
      w.range(b, this.valueStart[i]!, this.valueEnd[i]!);
      const qualBytes = this.qualifierEnd[i]! - this.qualifierStart[i]!;
      writeColumnHead(w.buf, head, famBytes, qualBytes, this.cellColumn[i]!.plain!.schemaId, this.timestamps[i]!, this.valueEnd[i]! - this.valueStart[i]!);
    }
    writeCompactHeader(w.buf, n, 0, oldest, newest, base);
    packer.endRow(w);
    return n;
  }

  /**
   * Sorts the cells into stored order (family name, then qualifier bytes: names here are ASCII,
   * so that is code point order too) into `order`; false when two cells name one column.
   */
  private sortCells(n: number): boolean {
    const order = this.order;
    for (let k = 0; k < n; k++) {
      const i = k;
      let j = k - 1;
      while (j >= 0) {
        const cmp = this.compareCells(order[j]!, i);
        if (cmp === 0) return false;
        if (cmp < 0) break;
        order[j + 1] = order[j]!;
        j--;
      }
      order[j + 1] = i;
    }
    return true;
  }

  private compareCells(x: number, y: number): number {
    const fx = this.cellFamily[x]!.family;
    const fy = this.cellFamily[y]!.family;
    if (fx !== fy) return fx < fy ? -1 : 1;
    const b = this.b;
    const ax = this.qualifierStart[x]!;
    const ay = this.qualifierStart[y]!;
    const lx = this.qualifierEnd[x]! - ax;
    const ly = this.qualifierEnd[y]! - ay;
    const common = Math.min(lx, ly);
    for (let k = 0; k < common; k++) {
      const d = b[ax + k]! - b[ay + k]!;
      if (d !== 0) return d;
    }
    return lx - ly;
  }

  /** `{family: {qualifier: [cell]}, ...}` from `p`; the position after it, or -1. */
  private cells(p: number): number {
    const b = this.b;
    if (b[p] !== OPEN_BRACE) return -1;
    p = this.ws(p + 1);
    if (b[p] === CLOSE_BRACE) return -1; // no cells: the general path writes nothing for it
    for (;;) {
      const nameEnd = this.name(p);
      if (nameEnd < 0) return -1;
      const fam = this.family(p + 1, nameEnd);
      if (fam === undefined || fam.seenInRow === this.row) return -1;
      fam.seenInRow = this.row;
      p = this.colon(nameEnd + 1);
      if (p < 0 || b[p] !== OPEN_BRACE) return -1;
      p = this.ws(p + 1);
      if (b[p] === CLOSE_BRACE) return -1;
      for (;;) {
        const qualifierEnd = this.name(p);
        if (qualifierEnd < 0) return -1;
        const column = this.column(fam, p + 1, qualifierEnd);
        const plain = column?.plain;
        if (plain == null || this.count === MAX_CELLS) return -1;
        const i = this.count++;
        this.cellFamily[i] = fam;
        this.cellColumn[i] = column!;
        this.qualifierStart[i] = p + 1;
        this.qualifierEnd[i] = qualifierEnd;
        p = this.colon(qualifierEnd + 1);
        if (p < 0 || b[p] !== OPEN_BRACKET) return -1;
        p = this.cell(this.ws(p + 1), i, plain);
        if (p < 0) return -1;
        p = this.ws(p);
        if (b[p] !== CLOSE_BRACKET) return -1; // more than one cell in a column: the general path orders them
        p = this.ws(p + 1);
        if (b[p] === CLOSE_BRACE) break;
        if (b[p] !== COMMA) return -1;
        p = this.ws(p + 1);
      }
      p = this.ws(p + 1);
      if (b[p] === CLOSE_BRACE) return p + 1;
      if (b[p] !== COMMA) return -1;
      p = this.ws(p + 1);
    }
  }

  /** `{"value": v, "timestamp": t}` (either order, timestamp optional) at `p` into cell `i`; the position after it, or -1. */
  private cell(p: number, i: number, plain: PlainColumn): number {
    const b = this.b;
    if (b[p] !== OPEN_BRACE) return -1;
    p = this.ws(p + 1);
    this.valueStart[i] = -1;
    this.timestamps[i] = -1;
    this.timestampStart[i] = -1;
    for (;;) {
      if (b[p] !== QUOTE) return -1;
      if (this.isKey(p, VALUE)) {
        if (this.valueStart[i]! >= 0) return -1;
        p = this.colon(p + VALUE.length + 2);
        if (p < 0) return -1;
        // The codec decides whether the value is valid as written (plain-values.ts).
        const valueEnd = plainValueEnd(plain.kind, b, p, this.end);
        if (valueEnd < 0) return -1;
        this.valueStart[i] = p;
        this.valueEnd[i] = valueEnd;
        p = valueEnd;
      } else if (this.isKey(p, TIMESTAMP)) {
        if (this.timestamps[i]! >= 0) return -1;
        p = this.colon(p + TIMESTAMP.length + 2);
        if (p < 0) return -1;
        const digitsEnd = plainTimestampEnd(b, p, this.end);
        if (digitsEnd < 0) return -1;
        this.timestamps[i] = digitsValue(b, p, digitsEnd);
        this.timestampStart[i] = p;
        this.timestampEnd[i] = digitsEnd;
        p = digitsEnd;
      } else return -1;
      p = this.ws(p);
      if (b[p] === CLOSE_BRACE) return this.valueStart[i]! >= 0 ? p + 1 : -1;
      if (b[p] !== COMMA) return -1;
      p = this.ws(p + 1);
    }
  }

  /** A string of printable ASCII without escapes at `p` (a name): the position of its closing quote, or -1. */
  private name(p: number): number {
    return plainStringClose(this.b, p, this.end);
  }

  /** Whether the string at `p` is `"<key>"`. */
  private isKey(p: number, key: Uint8Array): boolean {
    return this.matches(p + 1, key) && this.b[p + 1 + key.length] === QUOTE;
  }

  private matches(p: number, bytes: Uint8Array): boolean {
    const b = this.b;
    if (p + bytes.length > this.end) return false;
    for (let k = 0; k < bytes.length; k++) if (b[p + k] !== bytes[k]) return false;
    return true;
  }

  /** After a key's closing quote at p - 1: whitespace, a colon, whitespace; the position of the value, or -1. */
  private colon(p: number): number {
    p = this.ws(p);
    return this.b[p] === COLON ? this.ws(p + 1) : -1;
  }

  private ws(p: number): number {
    const b = this.b;
    while (p < this.end) {
      const c = b[p];
      if (c !== SPACE && c !== TAB && c !== LF && c !== CR) break;
      p++;
    }
    return p;
  }

  /**
   * The end of the JSON array at `p`, found by its brackets outside strings (parseExactJson checks
   * the rest); -1 at a byte above 0x7f or a control character in a string.
   */
  private skipArray(p: number): number {
    const b = this.b;
    let depth = 0;
    for (let q = p; q < this.end; q++) {
      const c = b[q]!;
      if (c >= 0x80) return -1;
      if (c === QUOTE) {
        for (q++; q < this.end; q++) {
          const s = b[q]!;
          if (s === BACKSLASH) q++;
          else if (s === QUOTE) break;
          else if (s < SPACE || s >= 0x80) return -1;
        }
      } else if (c === OPEN_BRACKET) depth++;
      else if (c === CLOSE_BRACKET && --depth === 0) return q + 1;
    }
    return -1;
  }

  /** The family named by b[start, end), known to the layout; undefined when it is not. */
  private family(start: number, end: number): KnownFamily | undefined {
    const b = this.b;
    for (const f of this.families) if (sameBytes(f.name, b, start, end)) return f;
    const family = b.toString('latin1', start, end);
    const layout = this.layout.families.get(family);
    if (layout === undefined) return undefined;
    const known: KnownFamily = {
      name: Buffer.from(family, 'latin1'),
      family,
      layout,
      columns: [],
      map: undefined,
      seenInRow: 0,
    };
    this.families.push(known);
    return known;
  }

  /** How cells of the column b[start, end) of `fam` are written (null: by the general path). */
  private column(fam: KnownFamily, start: number, end: number): KnownColumn | null {
    if (fam.layout.mapSchema !== undefined) {
      if (fam.map === undefined) {
        const plain = plainColumnOf(this.layout, fam.family, '', this.schemas);
        if (plain === undefined) return null; // a cold cache: asked again at the next row
        fam.map = { name: EMPTY, qualifier: undefined, plain };
      }
      return fam.map;
    }
    const b = this.b;
    for (const c of fam.columns) if (sameBytes(c.name, b, start, end)) return c;
    const qualifier = b.toString('latin1', start, end);
    const plain = plainColumnOf(this.layout, fam.family, qualifier, this.schemas);
    if (plain === undefined) return null; // a cold cache: asked again at the next row (the general path fills it meanwhile)
    const known: KnownColumn = { name: Buffer.from(qualifier, 'latin1'), qualifier, plain };
    if (fam.columns.length < MAX_KNOWN_COLUMNS) fam.columns.push(known);
    return known;
  }
}

function sameBytes(name: Uint8Array, b: Uint8Array, start: number, end: number): boolean {
  if (name.length !== end - start) return false;
  for (let k = 0; k < name.length; k++) if (name[k] !== b[start + k]) return false;
  return true;
}
