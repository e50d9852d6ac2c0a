/**
 * The first compact row format (FORMAT_VERSION 1), read only: rows written before format 2
 * (compact-row.ts) held the revision 3 response itself (entity id, cells map and CR LF). They are
 * decoded here into a RowModel, so every read renders them as any other row, and `serve` rewrites
 * them in format 2 before it listens (LmdbStore.upgradeTable).
 *
 *   0  u8  TAG_COMPACT        1  u8  1                   2  u16 columns (n)
 *   4  u32 text bytes (T)     8  u32 older versions (h)  12 u16 entity id end   14 u16 0
 *   16 f64 oldest newest-version timestamp               24 f64 newest timestamp
 *   32 text: {"entityId":<id>,"cells":{"fam":{"q":[<fragment>],...},...}} and the CR LF terminator
 *   32+T  n column entries of 24 bytes: u32 fragment start, u32 fragment end, u16 quoted family
 *      bytes (0: same family as before), u16 quoted qualifier bytes, u32 schema word, u32 ts high,
 *      u32 ts low; a fragment is {"timestamp":<ts>,"value":<json>,"writer_schema":<id>}
 *   then h older versions: u16 column, u32 schema word, u32 ts high, u32 ts low, u32 json bytes, json
 */
import { digitCount } from '../../bytes/byte-writer.js';
import { timestampDigits } from '../../model/cells/timestamp.js';
import type { Timestamp } from '../../model/types.js';
import { readTimestamp, readU16, readU32 } from './le-bytes.js';
import { RowModel, type StoredColumn } from './row-model.js';

export const FORMAT_VERSION_1 = 1;
const COUNTER_BIT = 0x8000_0000;
const HEADER_BYTES = 32;
const COLUMN_BYTES = 24;
const FRAG_TIMESTAMP = '{"timestamp":';
const FRAG_VALUE = ',"value":';
const FRAG_SCHEMA = ',"writer_schema":';

function valueStartOf(fragStart: number, timestamp: Timestamp): number {
  return fragStart + FRAG_TIMESTAMP.length + (typeof timestamp === 'number' ? digitCount(timestamp) : timestampDigits(timestamp)) + FRAG_VALUE.length;
}

function schemaPartBytes(schemaId: number): number {
  return FRAG_SCHEMA.length + digitCount(schemaId);
}

/** Decodes every version of a compact row (`b` is the whole entry value). */
export function decodeCompactRowV1(b: Buffer): RowModel {
  if (b[1] !== FORMAT_VERSION_1) throw new Error(`corrupt compact row: tag ${b[0]}, format ${b[1]}`);
  const n = readU16(b, 2);
  const textBytes = readU32(b, 4);
  const history = readU32(b, 8);
  const text = HEADER_BYTES;
  let dir = text + textBytes;
  const columns: StoredColumn[] = [];
  let family = '';
  for (let i = 0; i < n; i++, dir += COLUMN_BYTES) {
    const fragStart = text + readU32(b, dir);
    const fragEnd = text + readU32(b, dir + 4);
    const famBytes = readU16(b, dir + 8);
    const qualBytes = readU16(b, dir + 10);
    const word = readU32(b, dir + 12);
    const timestamp = readTimestamp(b, dir + 16);
    const qualStart = fragStart - 2 - qualBytes;
    if (famBytes > 0) family = JSON.parse(b.toString('utf8', qualStart - 2 - famBytes, qualStart - 2)) as string;
    const qualifier = JSON.parse(b.toString('utf8', qualStart, qualStart + qualBytes)) as string;
    const schemaId = word & ~COUNTER_BIT;
    const json = b.toString('utf8', valueStartOf(fragStart, timestamp), fragEnd - 1 - schemaPartBytes(schemaId));
    columns.push({ family, qualifier, versions: [{ timestamp, schemaId, counter: (word & COUNTER_BIT) !== 0, json }] });
  }
  let p = dir;
  for (let k = 0; k < history; k++) {
    const column = columns[readU16(b, p)]!;
    const word = readU32(b, p + 2);
    const timestamp = readTimestamp(b, p + 6);
    const len = readU32(b, p + 14);
    const json = b.toString('utf8', p + 18, p + 18 + len);
    column.versions.push({ timestamp, schemaId: word & ~COUNTER_BIT, counter: (word & COUNTER_BIT) !== 0, json });
    p += 18 + len;
  }
  return new RowModel(columns);
}
