/**
 * avsc Types as the cell codec uses them: longs are exact bigints, unions are always wrapped
 * (`{"branch": value}` or null, as in the Avro JSON encoding), named types must have names.
 * Types and resolvers are cached per process: building them is the costly part of a write.
 */

import avro from 'avsc';
import type { JsonValue } from '../types.js';
import { parseExactJson } from '../json/exact-json.js';
import { isInt64 } from '../cells/int64.js';

export type AvroType = avro.Type;
/** avsc does not export its Resolver class. */
export type AvroResolver = ReturnType<avro.Type['createResolver']>;
type AvroSchema = Parameters<typeof avro.Type.forSchema>[0];

/** avsc's own long refuses values beyond 2^53; this one holds any 64-bit value as a bigint. */
const BIG_LONG = avro.types.LongType.__with({
  fromBuffer: (buf: Buffer) => buf.readBigInt64LE(),
  toBuffer: (n: bigint) => {
    const buf = Buffer.alloc(8);
    buf.writeBigInt64LE(n);
    return buf;
  },
  // Used for schema defaults: accepts JSON integers (number or bigint), refuses anything else.
  fromJSON: (v: unknown) => {
    const n = typeof v === 'bigint' ? v : typeof v === 'number' && Number.isInteger(v) ? BigInt(v) : undefined;
    if (n === undefined || !isInt64(n)) throw new Error(`not a 64-bit integer: ${String(v)}`);
    return n;
  },
  toJSON: (n: bigint) => n,
  isValid: (v: unknown) => typeof v === 'bigint' && isInt64(v),
  compare: (a: bigint, b: bigint) => (a < b ? -1 : a > b ? 1 : 0),
});

function isLongSchema(schema: unknown): boolean {
  if (schema === 'long') return true;
  return typeof schema === 'object' && schema !== null && !Array.isArray(schema) && (schema as { type?: unknown }).type === 'long';
}

/**
 * Builds an avsc Type from a parsed schema; throws avsc's Error when the schema is invalid.
 * `longType`: the type of every long (default the exact bigint one; the export passes its own).
 */
export function buildAvroType(schema: JsonValue, longType: AvroType = BIG_LONG): AvroType {
  // A fresh options object each time: avsc records named types in `registry`.
  return avro.Type.forSchema(schema as AvroSchema, {
    wrapUnions: true,
    noAnonymousTypes: true,
    registry: {},
    // The object form {"type": "long"} bypasses the registry, so the hook catches both forms.
    typeHook: (s: unknown) => (isLongSchema(s) ? longType : undefined),
  });
}

/** Caches are cleared when they grow this big: a bound, not an LRU (schemas are few in practice). */
const CACHE_LIMIT = 10_000;

const typeCache = new Map<string, AvroType>();

/** The avsc Type of a canonical schema JSON text (schema-table.ts), cached per process. */
export function avroTypeOf(canonicalJson: string): AvroType {
  let type = typeCache.get(canonicalJson);
  if (type === undefined) {
    type = buildAvroType(parseExactJson(canonicalJson, 'schema'));
    if (typeCache.size >= CACHE_LIMIT) typeCache.clear();
    typeCache.set(canonicalJson, type);
  }
  return type;
}

const resolverCache = new WeakMap<AvroType, WeakMap<AvroType, AvroResolver | Error>>();

/**
 * The resolver reading values written as `writer` as `reader`, cached per pair of (cached) types;
 * an Error, also cached, when the schemas are incompatible.
 */
export function avroResolver(writer: AvroType, reader: AvroType): AvroResolver | Error {
  let byReader = resolverCache.get(writer);
  if (byReader === undefined) {
    byReader = new WeakMap();
    resolverCache.set(writer, byReader);
  }
  let resolver = byReader.get(reader);
  if (resolver === undefined) {
    try {
      resolver = reader.createResolver(writer);
    } catch (e) {
      resolver = e instanceof Error ? e : new Error(String(e));
    }
    byReader.set(reader, resolver);
  }
  return resolver;
}
