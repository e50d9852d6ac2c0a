/**
 * Validated rows held compactly until they are written: a POST body is validated completely
 * before anything is written, so all its rows wait in memory at once. As RowWrite objects they
 * cost ~440 bytes for a 63-byte row (a row key Buffer, a cells array, a cell object and its
 * strings; 150,000 rows of a 9.45 MB body took 66 MB); packed here they take about half the
 * body's bytes, and are turned back into RowWrite objects a slice at a time when written.
 *
 * Per row:  varint key length | key | varint cells
 * Per cell: u8 kind (+4 when it has a timestamp) | varint family | varint qualifier length |
 *           qualifier (UTF-8) | [u32 ts high, u32 ts low] | value
 * Values:   kind 0: varint schema id | varint json length | json (UTF-8);
 *           kinds 1 and 2 (counter set, increment): i64.
 * Families are numbered in the order they first appear (a batch holds a handful).
 */
import { readTimestampLE, writeTimestampLE } from './timestamp.js';
import type { EncodedCell, RowWrite, Timestamp } from '../types.js';
import { varintLength, writeVarint } from '../../bytes/varint.js';

const VALUE = 0;
const COUNTER_SET = 1;
const INCREMENT = 2;
const HAS_TIMESTAMP = 4;

/** Chunks start small (a one-row POST needs a few hundred bytes) and double up to 256 KiB. */
const FIRST_CHUNK = 4 * 1024;
const EMPTY = Buffer.alloc(0);
const MAX_CHUNK = 256 * 1024;

export class RowBatch {
  /** Rows and cells added. */
  rows = 0;
  cells = 0;
  /** Counter increments among the cells (they read the store while written). */
  increments = 0;
  /** Bytes the packed rows take (for tests and logs). */
  packedBytes = 0;

  private chunks: Buffer[] = [];
  /** The chunk being filled and the end of its used part. */
  private chunk = Buffer.alloc(0);
  private used = 0;
  private readonly familyIds = new Map<string, number>();
  private readonly families: string[] = [];

  add(row: RowWrite): void {
    let size = varintLength(row.rowKey.length) + row.rowKey.length + varintLength(row.cells.length);
    for (const cell of row.cells) {
      const qualifier = Buffer.byteLength(cell.qualifier, 'utf8');
      size +=
        1 +
        varintLength(this.familyId(cell.family)) +
        varintLength(qualifier) +
        qualifier +
        (cell.kind !== 'counter-increment' && cell.timestamp !== undefined ? 8 : 0);
      if (cell.kind === 'value') {
        const json = Buffer.byteLength(cell.json, 'utf8');
        size += varintLength(cell.schemaId) + varintLength(json) + json;
      } else {
        size += 8;
        if (cell.kind === 'counter-increment') this.increments++;
      }
    }
    const out = this.room(size);
    let pos = this.used;
    pos = writeVarint(out, pos, row.rowKey.length);
    pos += row.rowKey.copy(out, pos);
    pos = writeVarint(out, pos, row.cells.length);
    for (const cell of row.cells) pos = this.writeCell(out, pos, cell);
    this.used = pos;
    this.rows++;
    this.cells += row.cells.length;
    this.packedBytes += size;
  }

  /**
   * The rows in the order added, `size` rows at a time (each slice new objects). With `release`,
   * each chunk of packed rows is let go once read: the batch is empty afterwards.
   */
  *slices(size: number, release = false): Generator<RowWrite[]> {
    this.seal();
    const chunks = this.chunks;
    if (release) this.chunks = [];
    let slice: RowWrite[] = [];
    for (let c = 0; c < chunks.length; c++) {
      const buf = chunks[c]!;
      if (release) chunks[c] = EMPTY;
      const reader = new ChunkReader(buf, this.families);
      while (!reader.done) {
        slice.push(reader.row());
        if (slice.length === size) {
          yield slice;
          slice = [];
        }
      }
    }
    if (slice.length > 0) yield slice;
  }

  /** Every row as RowWrite objects (what Store.write takes). */
  all(): RowWrite[] {
    const rows: RowWrite[] = [];
    for (const slice of this.slices(1024)) for (const row of slice) rows.push(row);
    return rows;
  }

  /** Lets the packed rows go (their memory is freed once nothing else refers to it). */
  clear(): void {
    this.seal();
    this.chunks = [];
  }

  private familyId(family: string): number {
    let id = this.familyIds.get(family);
    if (id === undefined) {
      id = this.families.length;
      this.families.push(family);
      this.familyIds.set(family, id);
    }
    return id;
  }

  /** A chunk with `size` free bytes from `this.used` on (rows never span two chunks). */
  private room(size: number): Buffer {
    if (this.used + size <= this.chunk.length) return this.chunk;
    this.seal();
    const next = Math.min(MAX_CHUNK, Math.max(FIRST_CHUNK, this.chunk.length * 2));
    this.chunk = Buffer.allocUnsafeSlow(Math.max(next, size));
    this.used = 0;
    return this.chunk;
  }

  /** Files the chunk being filled (its used part). */
  private seal(): void {
    if (this.used > 0) this.chunks.push(this.chunk.subarray(0, this.used));
    this.chunk = Buffer.alloc(0);
    this.used = 0;
  }

  private writeCell(out: Buffer, pos: number, cell: EncodedCell): number {
    const timestamp = cell.kind === 'counter-increment' ? undefined : cell.timestamp;
    const kind = cell.kind === 'value' ? VALUE : cell.kind === 'counter-set' ? COUNTER_SET : INCREMENT;
    out[pos++] = kind | (timestamp === undefined ? 0 : HAS_TIMESTAMP);
    pos = writeVarint(out, pos, this.familyIds.get(cell.family)!);
    pos = writeString(out, pos, cell.qualifier);
    if (timestamp !== undefined) {
      writeTimestampLE(out, pos, timestamp);
      pos += 8;
    }
    if (cell.kind === 'value') {
      pos = writeVarint(out, pos, cell.schemaId);
      return writeString(out, pos, cell.json);
    }
    return out.writeBigInt64LE(cell.kind === 'counter-set' ? cell.value : cell.delta, pos);
  }
}

/** Reads packed rows from one chunk. */
class ChunkReader {
  pos = 0;

  constructor(
    private readonly buf: Buffer,
    private readonly families: readonly string[],
  ) {}

  get done(): boolean {
    return this.pos >= this.buf.length;
  }

  row(): RowWrite {
    const buf = this.buf;
    const keyLength = this.varint();
    // A view: the row key shares the chunk's memory.
    const rowKey = buf.subarray(this.pos, this.pos + keyLength);
    this.pos += keyLength;
    const count = this.varint();
    const cells: EncodedCell[] = [];
    for (let i = 0; i < count; i++) {
      const tag = buf[this.pos++]!;
      const family = this.families[this.varint()]!;
      const qualifier = this.string();
      let timestamp: Timestamp | undefined;
      if (tag & HAS_TIMESTAMP) {
        timestamp = readTimestampLE(buf, this.pos);
        this.pos += 8;
      }
      const kind = tag & 3;
      if (kind === VALUE) {
        const schemaId = this.varint();
        const json = this.string();
        cells.push(
          timestamp === undefined ? { kind: 'value', family, qualifier, schemaId, json } : { kind: 'value', family, qualifier, timestamp, schemaId, json },
        );
        continue;
      }
      const value = buf.readBigInt64LE(this.pos);
      this.pos += 8;
      if (kind === INCREMENT) cells.push({ kind: 'counter-increment', family, qualifier, delta: value });
      else
        cells.push(timestamp === undefined ? { kind: 'counter-set', family, qualifier, value } : { kind: 'counter-set', family, qualifier, timestamp, value });
    }
    return { rowKey, cells };
  }

  private varint(): number {
    let n = 0;
    let scale = 1;
    for (;;) {
      const b = this.buf[this.pos++]!;
      n += (b & 0x7f) * scale;
      if (b < 0x80) return n;
      scale *= 0x80;
    }
  }

  private string(): string {
    const length = this.varint();
    const s = this.buf.toString('utf8', this.pos, this.pos + length);
    this.pos += length;
    return s;
  }
}

/** A varint byte length and the string's UTF-8 bytes. */
function writeString(out: Buffer, pos: number, s: string): number {
  const len = Buffer.byteLength(s, 'utf8');
  pos = writeVarint(out, pos, len);
  return pos + out.write(s, pos, len, 'utf8');
}
