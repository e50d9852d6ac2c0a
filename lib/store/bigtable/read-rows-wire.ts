/**
 * Decodes ReadRowsResponse messages (google.bigtable.v2) straight from their protobuf wire bytes
 * into flat cell chunks, for scans. The client's own path decodes every message into protobufjs
 * objects and then converts those again with toObject (int64 timestamps become strings through
 * long.js, every wrapper an object of its own): 23% of the gateway's CPU in a profile of a full
 * scan over the emulator (one row of 5 cells per message). Here a chunk is one reused object
 * whose byte fields are views into the message buffer.
 *
 *   ReadRowsResponse { repeated CellChunk chunks = 1; bytes last_scanned_row_key = 2; RequestStats request_stats = 3; }
 *   CellChunk { bytes row_key = 1; StringValue family_name = 2; BytesValue qualifier = 3;
 *               int64 timestamp_micros = 4; repeated string labels = 5; bytes value = 6;
 *               int32 value_size = 7; oneof row_status { bool reset_row = 8; bool commit_row = 9; } }
 *   StringValue { string value = 1; }  BytesValue { bytes value = 1; }
 *
 * Unknown fields are skipped by wire type, as protobuf requires.
 */
import { timestampOf } from '../../model/cells/timestamp.js';
import type { Timestamp } from '../../model/types.js';

/** One CellChunk; fields that were absent on the wire are undefined (row key, family, qualifier) or 0/false. */
export interface FlatChunk {
  rowKey: Buffer | undefined;
  /** The family name's UTF-8 bytes, when the chunk names one. */
  family: Buffer | undefined;
  qualifier: Buffer | undefined;
  /** Milliseconds (microseconds / 1000, rounded down). */
  timestamp: Timestamp;
  value: Buffer;
  valueSize: number;
  resetRow: boolean;
  commitRow: boolean;
}

const EMPTY: Buffer = Buffer.alloc(0);

function corrupt(what: string): Error {
  return new Error(`malformed ReadRowsResponse: ${what}`);
}

/** Reads protobuf messages from one buffer; a cursor, not an object per field. */
class Reader {
  pos: number;
  constructor(
    readonly buf: Buffer,
    start: number,
    readonly end: number,
  ) {
    this.pos = start;
  }

  /** A non-negative varint below 2^53 (tags, lengths, int32 sizes, bools). */
  varint(): number {
    const buf = this.buf;
    let result = 0;
    let shift = 0;
    for (;;) {
      if (this.pos >= this.end) throw corrupt('truncated varint');
      const b = buf[this.pos++]!;
      if (b < 0x80) return result + b * 2 ** shift;
      result += (b & 0x7f) * 2 ** shift;
      shift += 7;
      if (shift > 63) throw corrupt('varint too long');
    }
  }

  /**
   * An int64 varint of microseconds, as milliseconds rounded down (as the client's timestamps are
   * read elsewhere). Plain arithmetic below 2^53 microseconds (every date to the year 2255), BigInt
   * beyond and for negative values.
   */
  millis(): Timestamp {
    const buf = this.buf;
    const start = this.pos;
    // Integer arithmetic on two 28-bit halves (a float multiply-add per byte was 8.5% of a scan's CPU).
    let lo = 0;
    let hi = 0;
    let shift = 0;
    for (;;) {
      if (this.pos >= this.end) throw corrupt('truncated varint');
      const b = buf[this.pos++]!;
      if (shift < 28) lo |= (b & 0x7f) << shift;
      else if (shift < 56) hi |= (b & 0x7f) << (shift - 28);
      if (b < 0x80) break;
      shift += 7;
      if (shift > 63) throw corrupt('varint too long');
    }
    // At most 8 bytes (56 bits) and below 2^53: exact as a double.
    if (shift <= 49) {
      const v = lo + hi * 268435456;
      if (v <= Number.MAX_SAFE_INTEGER) return floorDiv1000(v);
    }
    let big = 0n;
    for (let i = this.pos - 1; i >= start; i--) big = (big << 7n) | BigInt(buf[i]! & 0x7f);
    const micros = BigInt.asIntN(64, big);
    const q = micros / 1000n;
    return timestampOf(micros < 0n && q * 1000n !== micros ? q - 1n : q);
  }

  /** The [start, end) of a length-delimited field's payload; advances past it. */
  delimited(): number {
    const len = this.varint();
    const start = this.pos;
    if (start + len > this.end) throw corrupt('length beyond the message');
    this.pos = start + len;
    return start;
  }

  skip(wireType: number): void {
    switch (wireType) {
      case 0:
        while (this.pos < this.end && this.buf[this.pos++]! >= 0x80);
        return;
      case 1:
        this.pos += 8;
        break;
      case 2:
        this.delimited();
        return;
      case 5:
        this.pos += 4;
        break;
      default:
        throw corrupt(`wire type ${wireType}`);
    }
    if (this.pos > this.end) throw corrupt('truncated field');
  }
}

/** floor(v / 1000) exactly for a safe non-negative integer (the float quotient can round up across an integer). */
function floorDiv1000(v: number): number {
  let q = Math.floor(v / 1000);
  if (q * 1000 > v) q--;
  return q;
}

/** The bytes of the `value = 1` field of a StringValue / BytesValue wrapper in buf[start, end). */
function wrapped(buf: Buffer, start: number, end: number): Buffer {
  const r = new Reader(buf, start, end);
  let value = EMPTY;
  while (r.pos < end) {
    const tag = r.varint();
    if (tag === 0x0a) {
      const s = r.delimited();
      value = buf.subarray(s, r.pos);
    } else r.skip(tag & 7);
  }
  return value;
}

/**
 * Calls `onChunk` for every CellChunk of one ReadRowsResponse, in order, with one reused object
 * (copy what must outlive the call; the Buffers are views of `message`, which stays valid).
 */
export function forEachChunk(message: Buffer, chunk: FlatChunk, onChunk: (chunk: FlatChunk) => void): void {
  const r = new Reader(message, 0, message.length);
  while (r.pos < r.end) {
    const tag = r.varint();
    if (tag !== 0x0a) {
      r.skip(tag & 7);
      continue;
    }
    const start = r.delimited();
    const end = r.pos;
    chunk.rowKey = undefined;
    chunk.family = undefined;
    chunk.qualifier = undefined;
    chunk.timestamp = 0;
    chunk.value = EMPTY;
    chunk.valueSize = 0;
    chunk.resetRow = false;
    chunk.commitRow = false;
    const c = new Reader(message, start, end);
    while (c.pos < end) {
      const t = c.varint();
      switch (t) {
        case 0x0a: {
          const s = c.delimited();
          chunk.rowKey = message.subarray(s, c.pos);
          break;
        }
        case 0x12: {
          const s = c.delimited();
          chunk.family = wrapped(message, s, c.pos);
          break;
        }
        case 0x1a: {
          const s = c.delimited();
          chunk.qualifier = wrapped(message, s, c.pos);
          break;
        }
        case 0x20:
          chunk.timestamp = c.millis();
          break;
        case 0x32: {
          const s = c.delimited();
          chunk.value = message.subarray(s, c.pos);
          break;
        }
        case 0x38:
          chunk.valueSize = c.varint();
          break;
        case 0x40:
          chunk.resetRow = c.varint() !== 0;
          break;
        case 0x48:
          chunk.commitRow = c.varint() !== 0;
          break;
        default:
          c.skip(t & 7);
      }
    }
    onChunk(chunk);
  }
}

export function newFlatChunk(): FlatChunk {
  return { rowKey: undefined, family: undefined, qualifier: undefined, timestamp: 0, value: EMPTY, valueSize: 0, resetRow: false, commitRow: false };
}
