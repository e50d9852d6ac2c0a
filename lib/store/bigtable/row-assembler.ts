/**
 * Turns the cell chunks of a raw ReadRows response stream into rows (the ReadRows chunk protocol:
 * a row key starts a row, family and qualifier carry over until they change, a value may be split
 * over chunks with value_size > 0, reset_row discards the row so far, commit_row completes it),
 * and picks and decodes a row's cells as the CellPicker decides. Cells come out sorted by family,
 * qualifier, newest first, whatever order Bigtable returned the families in.
 */
import type { CellOut, RowOut, TableLayout } from '../../model/types.js';
import type { CellPicker } from '../cell-picker.js';
import { COUNTER_SCHEMA_ID, decodeCell } from '../lmdb/cell-value.js';

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
  readonly timestamp: number;
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

function millisOf(ts: CellChunk['timestampMicros']): number {
  const text = ts === undefined || ts === null ? '0' : String(ts);
  return text.length <= 15 ? Math.floor(Number(text) / 1000) : Number(BigInt(text) / 1000n);
}

export class ChunkMerger {
  private rowKey: Buffer | undefined;
  private family = '';
  private qualifier = '';
  private timestamp = 0;
  private parts: Buffer[] = [];
  private cells: RawCell[] = [];

  /** Feeds one chunk; returns the row it commits. */
  push(chunk: CellChunk): RawRow | undefined {
    if (chunk.resetRow) {
      this.reset();
      return undefined;
    }
    if (chunk.rowKey !== undefined && chunk.rowKey !== null) {
      const key = toBuffer(chunk.rowKey);
      if (key.length > 0 && (this.rowKey === undefined || !key.equals(this.rowKey))) {
        this.reset();
        this.rowKey = key;
      }
    }
    const family = chunk.familyName?.value;
    if (family) this.family = family;
    const qualifier = chunk.qualifier?.value;
    if (qualifier !== undefined && qualifier !== null) this.qualifier = toBuffer(qualifier).toString('utf8');
    if (this.parts.length === 0) this.timestamp = millisOf(chunk.timestampMicros);
    this.parts.push(toBuffer(chunk.value));
    if (!chunk.valueSize) {
      const value = this.parts.length === 1 ? this.parts[0]! : Buffer.concat(this.parts);
      this.parts = [];
      this.cells.push({ family: this.family, qualifier: this.qualifier, timestamp: this.timestamp, value });
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
    return { family: cell.family, qualifier: cell.qualifier, timestamp: cell.timestamp, schemaId: COUNTER_SCHEMA_ID, json: cell.value.readBigInt64BE(0).toString() };
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
  return cells.map((c, i) => ({ c, i })).sort((a, b) => (a.c.family < b.c.family ? -1 : a.c.family > b.c.family ? 1 : a.i - b.i)).map((x) => x.c);
}
