/**
 * Turns the cell chunks of a raw ReadRows response stream into rows (the ReadRows chunk protocol:
 * a row key starts a row, family and qualifier carry over until they change, a value may be split
 * over chunks with value_size > 0, reset_row discards the row so far, commit_row completes it),
 * and picks and decodes a row's cells as the CellPicker decides. Cells come out sorted by family,
 * qualifier, newest first, whatever order Bigtable returned the families in.
 */
import { timestampOf } from '../../model/cells/timestamp.js';
import type { CellOut, RowOut, TableLayout, Timestamp } from '../../model/types.js';
import type { CellPicker } from '../cell-picker.js';
import { COUNTER_SCHEMA_ID, decodeCell } from '../cell-value.js';
import { newFlatChunk, type FlatChunk } from './read-rows-wire.js';

/** One CellChunk as the gapic client delivers it. */
export interface CellChunk {
  readonly rowKey?: Buffer | Uint8Array | string;
  readonly familyName?: { readonly value?: string | null } | null;
  readonly qualifier?: { readonly value?: Buffer | Uint8Array | null } | null;
  readonly timestampMicros?: string | number | { toString(): string } | null;
  readonly value?: Buffer | Uint8Array | null;
  readonly valueSize?: number | null;
  readonly resetRow?: boolean | null;
  readonly commitRow?: boolean | null;
}

export interface RawCell {
  readonly family: string;
  readonly qualifier: string;
  /** Milliseconds (Bigtable holds microseconds, always multiples of 1000 here). */
  readonly timestamp: Timestamp;
  readonly value: Buffer;
}

export interface RawRow {
  readonly rowKey: Buffer;
  readonly cells: RawCell[];
}

function toBuffer(b: Buffer | Uint8Array | string | null | undefined): Buffer {
  if (b === undefined || b === null) return Buffer.alloc(0);
  if (typeof b === 'string') return Buffer.from(b, 'base64');
  return Buffer.isBuffer(b) ? b : Buffer.from(b.buffer, b.byteOffset, b.byteLength);
}

function millisOf(ts: CellChunk['timestampMicros']): Timestamp {
  const text = ts === undefined || ts === null ? '0' : String(ts);
  return text.length <= 15 ? Math.floor(Number(text) / 1000) : timestampOf(BigInt(text) / 1000n);
}

/** Names remembered per merger (family and qualifier texts); a wider map family decodes the rest each time. */
const NAME_CACHE = 64;

/**
 * Family and qualifier bytes to text, remembering the last few: a scan repeats the same columns
 * in every row, so most cells cost a byte comparison instead of a UTF-8 decode and a new string.
 */
class NameCache {
  private readonly bytes: Buffer[] = [];
  private readonly texts: string[] = [];
  private next = 0;

  text(b: Buffer): string {
    const n = this.bytes.length;
    // Columns come back in the same order in every row: try the entry after the last hit first.
    for (let k = 0, i = this.next; k < n; k++, i = i + 1 === n ? 0 : i + 1) {
      if (sameBytes(this.bytes[i]!, b)) {
        this.next = i + 1 === n ? 0 : i + 1;
        return this.texts[i]!;
      }
    }
    const text = b.toString('utf8');
    if (n < NAME_CACHE) {
      this.bytes.push(Buffer.from(b));
      this.texts.push(text);
      this.next = 0;
    }
    return text;
  }
}

function sameBytes(a: Buffer, b: Buffer): boolean {
  const n = a.length;
  if (n !== b.length) return false;
  for (let i = 0; i < n; i++) if (a[i] !== b[i]) return false;
  return true;
}

export class ChunkMerger {
  private rowKey: Buffer | undefined;
  private family = '';
  private qualifier = '';
  private timestamp: Timestamp = 0;
  private parts: Buffer[] = [];
  private cells: RawCell[] = [];
  private readonly families = new NameCache();
  private readonly qualifiers = new NameCache();
  private readonly flat: FlatChunk = newFlatChunk();

  /** Feeds one chunk as the gapic client delivers it; returns the row it commits. */
  push(chunk: CellChunk): RawRow | undefined {
    const f = this.flat;
    f.rowKey = chunk.rowKey === undefined || chunk.rowKey === null ? undefined : toBuffer(chunk.rowKey);
    const family = chunk.familyName?.value;
    f.family = family ? Buffer.from(family, 'utf8') : undefined;
    const qualifier = chunk.qualifier?.value;
    f.qualifier = qualifier === undefined || qualifier === null ? undefined : toBuffer(qualifier);
    f.timestamp = millisOf(chunk.timestampMicros);
    f.value = toBuffer(chunk.value);
    f.valueSize = chunk.valueSize ?? 0;
    f.resetRow = chunk.resetRow ?? false;
    f.commitRow = chunk.commitRow ?? false;
    return this.pushFlat(f);
  }

  /** Feeds one chunk decoded from the wire (read-rows-wire.ts); returns the row it commits. */
  pushFlat(chunk: FlatChunk): RawRow | undefined {
    if (chunk.resetRow) {
      this.reset();
      return undefined;
    }
    const key = chunk.rowKey;
    if (key !== undefined && key.length > 0 && (this.rowKey === undefined || !sameBytes(key, this.rowKey))) {
      this.reset();
      this.rowKey = key;
    }
    // An empty family name carries the previous one over (as the gapic objects' '' did).
    if (chunk.family !== undefined && chunk.family.length > 0) this.family = this.families.text(chunk.family);
    if (chunk.qualifier !== undefined) this.qualifier = this.qualifiers.text(chunk.qualifier);
    if (this.parts.length === 0) this.timestamp = chunk.timestamp;
    if (chunk.valueSize === 0 && this.parts.length === 0) {
      this.cells.push({ family: this.family, qualifier: this.qualifier, timestamp: this.timestamp, value: chunk.value });
    } else {
      this.parts.push(chunk.value);
      if (!chunk.valueSize) {
        const value = Buffer.concat(this.parts);
        this.parts = [];
        this.cells.push({ family: this.family, qualifier: this.qualifier, timestamp: this.timestamp, value });
      }
    }
    if (!chunk.commitRow) return undefined;
    const row = this.rowKey === undefined ? undefined : { rowKey: this.rowKey, cells: this.cells };
    this.reset();
    return row;
  }

  pushAll(chunks: readonly CellChunk[]): RawRow[] {
    const rows: RawRow[] = [];
    for (const chunk of chunks) {
      const row = this.push(chunk);
      if (row) rows.push(row);
    }
    return rows;
  }

  private reset(): void {
    this.rowKey = undefined;
    this.family = '';
    this.qualifier = '';
    this.parts = [];
    this.cells = [];
  }
}

/** Which columns hold counters (stored in Bigtable as plain 8-byte big-endian integers). */
export class CounterColumns {
  private readonly all = new Set<string>();
  private readonly columns = new Map<string, Set<string>>();

  constructor(layout: TableLayout) {
    for (const family of layout.families.values()) {
      if (family.mapSchema) {
        if (family.mapSchema.type === 'COUNTER') this.all.add(family.name);
      } else {
        this.columns.set(family.name, new Set(family.columns.filter((c) => c.schema.type === 'COUNTER').map((c) => c.name)));
      }
    }
  }

  has(family: string, qualifier: string): boolean {
    return this.all.has(family) || (this.columns.get(family)?.has(qualifier) ?? false);
  }
}

/** The wire form of a stored cell: counters are plain 8-byte integers, values `01 varint(schemaId) json`. */
export function decodeBigtableCell(counters: CounterColumns, cell: RawCell): CellOut {
  if (cell.value.length === 8 && counters.has(cell.family, cell.qualifier)) {
    return {
      family: cell.family,
      qualifier: cell.qualifier,
      timestamp: cell.timestamp,
      schemaId: COUNTER_SCHEMA_ID,
      json: cell.value.readBigInt64BE(0).toString(),
    };
  }
  return decodeCell(cell.family, cell.qualifier, cell.timestamp, cell.value);
}

/** The row as a read returns it, or undefined when the picker keeps none of its cells. */
export function pickRow(row: RawRow, picker: CellPicker, counters: CounterColumns): RowOut | undefined {
  picker.beginRow();
  const cells: CellOut[] = [];
  let sorted = true;
  let lastFamily = '';
  for (const cell of row.cells) {
    if (cell.family !== lastFamily) {
      if (cell.family < lastFamily) sorted = false;
      lastFamily = cell.family;
    }
    if (picker.keep(cell.family, cell.qualifier, cell.timestamp)) cells.push(decodeBigtableCell(counters, cell));
  }
  if (cells.length === 0) return undefined;
  return { rowKey: row.rowKey, cells: sorted ? cells : sortByFamily(cells) };
}

/** Stable sort by family name: qualifiers and versions inside a family are already in order. */
function sortByFamily(cells: CellOut[]): CellOut[] {
  return cells
    .map((c, i) => ({ c, i }))
    .sort((a, b) => (a.c.family < b.c.family ? -1 : a.c.family > b.c.family ? 1 : a.i - b.i))
    .map((x) => x.c);
}
