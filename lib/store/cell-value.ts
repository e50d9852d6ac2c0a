/**
 * The stored value of one cell, as both stores keep it. A value is kept in its wire JSON so that
 * reads copy text and never decode Avro (validation and rendering happened once, at write time):
 *
 *   01 | varint(schemaId) | UTF-8 JSON text      an Avro-typed value (both stores)
 *   02 | int64 big-endian                         a counter of the embedded store (8 bytes, so increments are exact)
 *
 * Bigtable keeps a counter as a plain 8-byte big-endian integer instead, which its ReadModifyWrite
 * can increment (bigtable/row-assembler.ts tells counters by the column's layout).
 */
import type { CellOut, Timestamp } from '../model/types.js';
import { varintLength, writeVarint } from '../bytes/varint.js';

const KIND_VALUE = 1;
const KIND_COUNTER = 2;
/** Schema-table id of "long": what counters report as writer_schema (the original's REST-67). */
export const COUNTER_SCHEMA_ID = 3;

export function encodeValueCell(schemaId: number, json: string): Buffer {
  const jsonBytes = Buffer.byteLength(json);
  const out = Buffer.allocUnsafe(1 + varintLength(schemaId) + jsonBytes);
  out[0] = KIND_VALUE;
  const pos = writeVarint(out, 1, schemaId);
  out.write(json, pos, 'utf8');
  return out;
}

/**
 * encodeValueCell into one reusable buffer: the returned view is valid until the next call. For
 * values handed to LMDB at once (putSync inside a write transaction copies them before returning).
 */
export class ValueCellScratch {
  private buf = Buffer.allocUnsafe(16 * 1024);

  value(schemaId: number, json: string): Buffer {
    // 3 UTF-8 bytes per UTF-16 unit at most, plus the kind byte and a varint of at most 8 bytes.
    const worst = 9 + 3 * json.length;
    if (worst > this.buf.length) {
      if (worst > 1024 * 1024) return encodeValueCell(schemaId, json);
      this.buf = Buffer.allocUnsafe(2 * worst);
    }
    const out = this.buf;
    out[0] = KIND_VALUE;
    const pos = writeVarint(out, 1, schemaId);
    return out.subarray(0, pos + out.write(json, pos, 'utf8'));
  }
}

export function encodeCounterCell(value: bigint): Buffer {
  const out = Buffer.allocUnsafe(9);
  out[0] = KIND_COUNTER;
  out.writeBigInt64BE(value, 1);
  return out;
}

/** Whether a stored cell value holds a counter. */
export function isCounterCell(value: Uint8Array): boolean {
  return value[0] === KIND_COUNTER && value.length === 9;
}

/** The counter value of a stored cell, or 0 when the cell holds no counter. */
export function counterValue(value: Uint8Array | undefined): bigint {
  if (!value || value[0] !== KIND_COUNTER || value.length !== 9) return 0n;
  return Buffer.from(value.buffer, value.byteOffset, value.byteLength).readBigInt64BE(1);
}

export function decodeCell(family: string, qualifier: string, timestamp: Timestamp, value: Uint8Array): CellOut {
  const buf = Buffer.from(value.buffer, value.byteOffset, value.byteLength);
  if (buf[0] === KIND_COUNTER) {
    return { family, qualifier, timestamp, schemaId: COUNTER_SCHEMA_ID, json: buf.readBigInt64BE(1).toString() };
  }
  return { family, qualifier, timestamp, schemaId: valueSchemaId(buf), json: buf.toString('utf8', valueJsonStart(buf)) };
}

/** The schema id of a value cell (the varint after the kind byte). */
export function valueSchemaId(value: Uint8Array): number {
  let schemaId = 0;
  let shift = 0;
  for (let pos = 1; ; pos++) {
    const b = value[pos]!;
    schemaId += (b & 0x7f) * 2 ** shift;
    if (b < 0x80) return schemaId;
    shift += 7;
  }
}

/** Where a value cell's JSON text starts (after the kind byte and the schema-id varint). */
export function valueJsonStart(value: Uint8Array): number {
  let pos = 1;
  while (value[pos++]! >= 0x80);
  return pos;
}
