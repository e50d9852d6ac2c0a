/**
 * Entity id components <-> row key bytes, byte-identical to KijiSchema (docs/data-model.md, "Row keys").
 */
import * as crypto from 'node:crypto';
import { isUtf8 } from 'node:buffer';
import { rgError } from '../../errors.js';
import { WILDCARD, type ComponentValue, type RowKeyComponentSpec, type RowKeyFormat, type Wildcard } from '../types.js';
import { isInt64 } from '../cells/int64.js';

type FormattedFormat = Extract<RowKeyFormat, { encoding: 'FORMATTED' }>;

const INT32_MIN = -0x80000000;
const INT32_MAX = 0x7fffffff;

// One-shot crypto.hash (Node >= 20.12): 1.0 us a digest with createHash, 0.63 us with crypto.hash
// into a Buffer, 0.20 us into a latin1 string (one character a byte), which md5Into copies from
// (an 8-byte key, 1,000,000 digests).
const oneShot = (crypto as { hash?: (alg: string, data: Uint8Array, enc: 'buffer' | 'latin1') => Buffer | string }).hash;

export function md5(data: Uint8Array): Buffer {
  return oneShot ? (oneShot('md5', data, 'buffer') as Buffer) : crypto.createHash('md5').update(data).digest();
}

/**
 * Writes the first `count` (<= 16) bytes of the MD5 digest of data[start, end) at target[0..count)
 * (target may be data, outside that range). Node's digest throughout: an MD5 of one block in
 * JavaScript saved ~230 ns of a point read's 14-20 us (under 2%), below the 3% a benchmark
 * scenario must show for code of its own (issue #27).
 */
export function md5Into(target: Uint8Array, count: number, data: Uint8Array, start = 0, end = data.length): void {
  const input = data.subarray(start, end);
  if (oneShot === undefined) {
    md5(input).copy(target, 0, 0, count);
    return;
  }
  const digest = oneShot('md5', input, 'latin1') as string;
  for (let i = 0; i < count; i++) target[i] = digest.charCodeAt(i);
}

/** Unsigned lexicographic order: the order rows are stored and scanned in. */
export function compareBytes(a: Uint8Array, b: Uint8Array): number {
  return Buffer.compare(a, b);
}

/** A component value as it appears in messages: strings quoted, numbers plain. */
export function describeValue(v: ComponentValue): string {
  if (v === null) return 'null';
  if (typeof v === 'string') return `the string ${JSON.stringify(v)}`;
  if (typeof v === 'bigint') return `the number ${v}`;
  return `the number ${v}`;
}

/** Components as compact JSON (bigints exact, wildcards `[]`), for messages and entity id texts. */
export function componentsToJson(components: readonly (ComponentValue | Wildcard)[]): string {
  let out = '[';
  for (let i = 0; i < components.length; i++) {
    if (i > 0) out += ',';
    const v = components[i]!;
    out += typeof v === 'string' ? JSON.stringify(v) : v === WILDCARD ? '[]' : String(v);
  }
  return `${out}]`;
}

function isWellFormed(s: string): boolean {
  // ES2024 String.prototype.isWellFormed (Node 20); the TS lib in use predates it.
  return (s as unknown as { isWellFormed(): boolean }).isWellFormed();
}

function componentLabel(spec: RowKeyComponentSpec, index: number): string {
  return `component '${spec.name}' (index ${index})`;
}

/**
 * Checks one non-null component against its type and returns it normalized
 * (LONG as bigint, as KijiSchema promotes Integer to Long). Shared with wildcard matching.
 */
export function checkComponent(spec: RowKeyComponentSpec, index: number, v: ComponentValue): string | number | bigint {
  switch (spec.type) {
    case 'STRING':
      if (typeof v !== 'string') throw rgError('RG_ERR_BAD_ENTITY_ID', `${componentLabel(spec, index)} must be a STRING, got ${describeValue(v)}`);
      if (v.includes('\0'))
        throw rgError(
          'RG_ERR_BAD_ENTITY_ID',
          `${componentLabel(spec, index)} must not contain U+0000 (it terminates STRING components in the row key): ${JSON.stringify(v)}`,
        );
      if (!isWellFormed(v))
        throw rgError(
          'RG_ERR_BAD_ENTITY_ID',
          `${componentLabel(spec, index)} has an unpaired UTF-16 surrogate, which has no UTF-8 encoding: ${JSON.stringify(v)}`,
        );
      return v;
    case 'INTEGER':
      if (typeof v === 'number' && Number.isInteger(v) && v >= INT32_MIN && v <= INT32_MAX) return v;
      if (typeof v === 'string') throw rgError('RG_ERR_BAD_ENTITY_ID', `${componentLabel(spec, index)} must be an INTEGER, got ${describeValue(v)}`);
      throw rgError(
        'RG_ERR_BAD_ENTITY_ID',
        `${componentLabel(spec, index)} must be an INTEGER (a 32-bit integer, -2147483648..2147483647), got ${describeValue(v)}`,
      );
    case 'LONG':
      if (typeof v === 'bigint') {
        if (isInt64(v)) return v;
      } else if (typeof v === 'number') {
        if (Number.isSafeInteger(v)) return BigInt(v);
      } else {
        throw rgError('RG_ERR_BAD_ENTITY_ID', `${componentLabel(spec, index)} must be a LONG, got ${describeValue(v)}`);
      }
      throw rgError('RG_ERR_BAD_ENTITY_ID', `${componentLabel(spec, index)} must be a LONG (a 64-bit integer), got ${describeValue(v)}`);
  }
}

/**
 * Validates a FORMATTED component list (count, nullability, types) and returns the normalized
 * non-null prefix; trailing nulls are dropped since they encode to nothing.
 */
export function checkFormattedComponents(format: FormattedFormat, components: readonly ComponentValue[]): (string | number | bigint)[] {
  const specs = format.components;
  if (components.length > specs.length) {
    throw rgError(
      'RG_ERR_BAD_ENTITY_ID',
      `entity id has ${components.length} components but the table key has ${specs.length}: ${componentsToJson(components)}`,
    );
  }
  if (components.length < format.nullableStartIndex) {
    throw rgError(
      'RG_ERR_BAD_ENTITY_ID',
      `entity id has ${components.length} component${components.length === 1 ? '' : 's'} but the table key needs at least ${format.nullableStartIndex} (components before index ${format.nullableStartIndex} cannot be null): ${componentsToJson(components)}`,
    );
  }
  const values: (string | number | bigint)[] = [];
  let firstNull = -1;
  for (let i = 0; i < components.length; i++) {
    const v = components[i]!;
    const spec = specs[i]!;
    if (v === null) {
      if (i < format.nullableStartIndex) {
        throw rgError(
          'RG_ERR_BAD_ENTITY_ID',
          `${componentLabel(spec, i)} cannot be null (components before index ${format.nullableStartIndex} are required): ${componentsToJson(components)}`,
        );
      }
      if (firstNull < 0) firstNull = i;
      continue;
    }
    if (firstNull >= 0) {
      throw rgError(
        'RG_ERR_BAD_ENTITY_ID',
        `${componentLabel(spec, i)} is not null but follows the null component at index ${firstNull} (only trailing components may be null): ${componentsToJson(components)}`,
      );
    }
    values.push(checkComponent(spec, i, v));
  }
  return values;
}

/** Encoded size of one checked component, STRING terminator included. */
function encodedLength(v: string | number | bigint): number {
  if (typeof v === 'string') return Buffer.byteLength(v, 'utf8') + 1;
  return typeof v === 'number' ? 4 : 8;
}

/** Writes one checked component at `pos`; returns the end of its value (before a STRING terminator). */
function writeComponent(buf: Buffer, pos: number, v: string | number | bigint): number {
  if (typeof v === 'string') {
    const end = pos + buf.write(v, pos, 'utf8');
    buf[end] = 0;
    return end;
  }
  if (typeof v === 'number') {
    buf.writeInt32BE(v, pos);
    buf[pos]! ^= 0x80;
    return pos + 4;
  }
  buf.writeBigInt64BE(v, pos);
  buf[pos]! ^= 0x80;
  return pos + 8;
}

/** The encoded bytes of one checked component, STRING terminator included (wildcard matching). */
export function encodeComponent(v: string | number | bigint): Buffer {
  const buf = Buffer.allocUnsafe(encodedLength(v));
  writeComponent(buf, 0, v);
  return buf;
}

/**
 * Row key of checked FORMATTED values: salt over the first rangeScanStartIndex values
 * (without STRING terminators), then every value. `materialize` false gives the salt only.
 */
export function buildFormattedKey(format: FormattedFormat, values: readonly (string | number | bigint)[], materialize: boolean): Buffer {
  const h = format.hashSize;
  let size = h;
  for (const v of values) size += encodedLength(v);
  // Every byte is written below (salt, values, terminators), so no zero fill is needed.
  const buf = Buffer.allocUnsafe(size);
  const hashed = Math.min(values.length, format.rangeScanStartIndex);
  let pos = h;
  let hashEnd = h;
  let gaps = false; // a STRING terminator inside the hashed range
  for (let i = 0; i < values.length; i++) {
    const end = writeComponent(buf, pos, values[i]!);
    pos = end;
    if (typeof values[i] === 'string') pos++;
    if (i < hashed) {
      hashEnd = end;
      if (pos !== end && i < hashed - 1) gaps = true;
    }
  }
  if (gaps) md5Into(buf, h, hashInput(buf, h, values, hashed));
  else md5Into(buf, h, buf, h, hashEnd);
  return materialize ? buf : buf.subarray(0, h);
}

/** The salted bytes when STRING terminators interleave them: the values without terminators. */
function hashInput(buf: Buffer, h: number, values: readonly (string | number | bigint)[], hashed: number): Buffer {
  const parts: Buffer[] = [];
  let pos = h;
  for (let i = 0; i < hashed; i++) {
    const len = encodedLength(values[i]!);
    const valueLen = typeof values[i] === 'string' ? len - 1 : len;
    parts.push(buf.subarray(pos, pos + valueLen));
    pos += len;
  }
  return Buffer.concat(parts);
}

function singleKijiKey(format: RowKeyFormat, components: readonly ComponentValue[]): Buffer {
  const v = components[0];
  if (components.length !== 1 || typeof v !== 'string') {
    const got = components.length !== 1 ? `${components.length} components` : describeValue(v!);
    throw rgError('RG_ERR_BAD_ENTITY_ID', `a ${format.encoding} row key takes exactly one string component, got ${got}: ${componentsToJson(components)}`);
  }
  if (!isWellFormed(v)) throw rgError('RG_ERR_BAD_ENTITY_ID', `the key ${JSON.stringify(v)} has an unpaired UTF-16 surrogate, which has no UTF-8 encoding`);
  return Buffer.from(v, 'utf8');
}

/** The row key of an entity id given as components (LONG may be given as a safe-integer number). */
export function encodeRowKey(format: RowKeyFormat, components: readonly ComponentValue[]): Buffer {
  let key: Buffer;
  switch (format.encoding) {
    case 'RAW':
      key = singleKijiKey(format, components);
      break;
    case 'HASH':
      key = md5(singleKijiKey(format, components));
      break;
    case 'HASH_PREFIX': {
      const kiji = singleKijiKey(format, components);
      key = Buffer.concat([md5(kiji).subarray(0, format.hashSize), kiji]);
      break;
    }
    case 'FORMATTED':
      key = buildFormattedKey(format, checkFormattedComponents(format, components), !format.suppressMaterialization);
      break;
  }
  if (key.length === 0) throw rgError('RG_ERR_BAD_ENTITY_ID', `entity id ${componentsToJson(components)} gives an empty row key, which no store can hold`);
  return key;
}

function badKey(format: RowKeyFormat, rowKey: Buffer, problem: string): Error {
  return rgError('RG_ERR_BAD_ROW_KEY', `row key ${rowKey.toString('hex')} is not a valid ${format.encoding} key: ${problem}`);
}

/** UTF-8 text of key[start, end); rejects invalid UTF-8 so decode -> encode gives back the same bytes. */
function utf8At(format: RowKeyFormat, key: Buffer, start: number, end: number, what: string): string {
  const s = key.toString('utf8', start, end);
  // U+FFFD is rare in real text: only then pay for the exact check.
  if (s.includes('\uFFFD') && !isUtf8(key.subarray(start, end))) throw badKey(format, key, `${what} is not valid UTF-8`);
  return s;
}

function decodeFormatted(format: FormattedFormat, key: Buffer): ComponentValue[] | undefined {
  const h = format.hashSize;
  if (key.length < h) throw badKey(format, key, `it is shorter than the ${h}-byte hash prefix`);
  if (format.suppressMaterialization) {
    if (key.length !== h)
      throw badKey(format, key, `the table suppresses key materialization, so the key is the ${h}-byte hash only, but it has ${key.length} bytes`);
    return undefined;
  }
  const specs = format.components;
  const out: ComponentValue[] = new Array<ComponentValue>(specs.length);
  let pos = h;
  let i = 0;
  for (; i < specs.length && pos < key.length; i++) {
    const spec = specs[i]!;
    if (spec.type === 'STRING') {
      const end = key.indexOf(0, pos);
      if (end < 0) throw badKey(format, key, `${componentLabel(spec, i)} at byte ${pos} has no 0x00 terminator`);
      out[i] = utf8At(format, key, pos, end, `${componentLabel(spec, i)} at byte ${pos}`);
      pos = end + 1;
    } else {
      const width = spec.type === 'INTEGER' ? 4 : 8;
      if (pos + width > key.length) throw badKey(format, key, `${componentLabel(spec, i)} at byte ${pos} needs ${width} bytes, only ${key.length - pos} left`);
      // Flip the sign bit back without touching the caller's buffer.
      out[i] = width === 4 ? (key.readUInt32BE(pos) ^ 0x80000000) | 0 : longComponent(key, pos);
      pos += width;
    }
  }
  if (pos < key.length) throw badKey(format, key, `${key.length - pos} extra bytes after the last component`);
  if (i < format.nullableStartIndex) throw badKey(format, key, `it has ${i} components but the table key needs at least ${format.nullableStartIndex}`);
  for (; i < specs.length; i++) out[i] = null;
  return out;
}

/** A LONG component's 8 bytes at `pos` (big-endian, sign bit flipped) as its value. */
function longComponent(key: Buffer, pos: number): bigint {
  const high = (key.readUInt32BE(pos) ^ 0x80000000) | 0;
  // Within 2^53 the value is one exact double: one BigInt made from it instead of three bigint
  // operations on the whole 64 bits (an Arrow scan of LONG ids spent ~6% of a thread there).
  if (high >= -0x200000 && high < 0x200000) return BigInt(high * 0x1_0000_0000 + key.readUInt32BE(pos + 4));
  return BigInt.asIntN(64, key.readBigUInt64BE(pos) ^ 0x8000000000000000n);
}

/**
 * A row key's components for an export's entity id columns: none for a key without components or
 * one its format cannot decode (such a row is named by its bytes, as RAW keys are).
 */
export function componentsOrNone(format: RowKeyFormat, rowKey: Buffer): readonly ComponentValue[] {
  try {
    return decodeRowKey(format, rowKey) ?? [];
  } catch {
    return [];
  }
}

/**
 * The components of a row key: FORMATTED (materialized) -> all components, trailing nulls as null;
 * HASH_PREFIX -> [kiji key]; RAW, HASH and suppressed keys carry none -> undefined.
 */
export function decodeRowKey(format: RowKeyFormat, rowKey: Buffer): ComponentValue[] | undefined {
  if (rowKey.length === 0) throw rgError('RG_ERR_BAD_ROW_KEY', 'row key is empty');
  switch (format.encoding) {
    case 'RAW':
    case 'HASH':
      return undefined;
    case 'HASH_PREFIX':
      if (rowKey.length < format.hashSize) throw badKey(format, rowKey, `it is shorter than the ${format.hashSize}-byte hash prefix`);
      return [utf8At(format, rowKey, format.hashSize, rowKey.length, 'the key after the hash prefix')];
    case 'FORMATTED':
      return decodeFormatted(format, rowKey);
  }
}
