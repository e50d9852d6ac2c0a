/**
 * The schema table's shared rules (docs/data-model.md, "The schema table"): the pre-registered schemas, the
 * canonical JSON text that identifies a schema, and an in-memory table (tests; base for stores).
 */

import { rgError, isRowgateError } from '../../errors.js';
import type { JsonValue, SchemaEntry, SchemaTable } from '../types.js';
import { parseExactJson, stringifyExactJson } from '../json/exact-json.js';
import { buildAvroType, type AvroType } from './avro-types.js';
import { avroToJson } from './avro-json.js';

export { avroTypeOf } from './avro-types.js';

/** Canonical JSON of the pre-registered schemas; the index is the id (string 0 ... null 7). */
export const PRE_REGISTERED_SCHEMAS: readonly string[] = Object.freeze(
  ['string', 'bytes', 'int', 'long', 'float', 'double', 'boolean', 'null'].map((name) => JSON.stringify(name)),
);

export const SCHEMA_ID = { string: 0, bytes: 1, int: 2, long: 3, float: 4, double: 5, boolean: 6, null: 7 } as const;

export const FIRST_USER_SCHEMA_ID = PRE_REGISTERED_SCHEMAS.length;

const CACHE_LIMIT = 10_000;
const canonicalCache = new Map<string, string>();

/**
 * The canonical JSON text of a schema: its identity in the schema table. Accepts a parsed schema,
 * schema JSON text, or a bare type name ("string", "org.x.Rec" is refused as undefined). The text
 * is compact with a fixed key order; full names replace namespaces; doc and unknown attributes
 * (including logicalType) are dropped; defaults, aliases, field order and enum defaults are kept
 * because they change how data resolves. Invalid schemas throw RG_ERR_BAD_SCHEMA.
 */
export function canonicalSchemaJson(schema: JsonValue | string): string {
  // Prefixed: the name `null` and the JSON value null must not share an entry.
  const key = typeof schema === 'string' ? `s${schema}` : `j${stringifyExactJson(schema)}`;
  let canonical = canonicalCache.get(key);
  if (canonical === undefined) {
    canonical = emitSchema(parseSchemaType(schema), '', new Set());
    if (canonicalCache.size >= CACHE_LIMIT) canonicalCache.clear();
    canonicalCache.set(key, canonical);
  }
  return canonical;
}

/** The canonical JSON of an avsc type built by avro-types.ts (e.g. one branch of a union). */
export function canonicalJsonOfType(type: AvroType): string {
  return emitSchema(type, '', new Set());
}

function parseSchemaType(schema: JsonValue | string): AvroType {
  let parsed: JsonValue = schema;
  // A string is schema JSON text when it looks like JSON, else a type name ("string").
  if (typeof schema === 'string' && /^\s*[[{"]/.test(schema)) {
    try {
      parsed = parseExactJson(schema, 'schema');
    } catch (e) {
      throw rgError('RG_ERR_BAD_SCHEMA', `invalid Avro schema ${shorten(schema)}: ${isRowgateError(e) ? e.message : String(e)}`);
    }
  }
  try {
    return buildAvroType(parsed);
  } catch (e) {
    const problem = e instanceof Error ? e.message : String(e);
    throw rgError('RG_ERR_BAD_SCHEMA', `invalid Avro schema ${shorten(typeof schema === 'string' ? schema : stringifyExactJson(schema))}: ${problem}`);
  }
}

function shorten(text: string): string {
  return text.length > 200 ? `${text.slice(0, 197)}...` : text;
}

const PRIMITIVES: Record<string, string> = {
  null: '"null"',
  boolean: '"boolean"',
  int: '"int"',
  'abstract:long': '"long"',
  long: '"long"',
  float: '"float"',
  double: '"double"',
  bytes: '"bytes"',
  string: '"string"',
};

interface FieldInfo {
  name: string;
  type: AvroType;
  order: string;
  aliases: string[];
  defaultValue(): unknown;
}

/** Writes a type; `ns` is the enclosing namespace, `defined` the named types already written. */
function emitSchema(type: AvroType, ns: string, defined: Set<string>): string {
  const primitive = PRIMITIVES[type.typeName];
  if (primitive !== undefined) return primitive;
  const t = type as AvroType & {
    types: AvroType[];
    itemsType: AvroType;
    valuesType: AvroType;
    symbols: string[];
    size: number;
    fields: FieldInfo[];
    default?: string;
  };
  switch (type.typeName) {
    case 'union:wrapped':
      return `[${t.types.map((b) => emitSchema(b, ns, defined)).join(',')}]`;
    case 'array':
      return `{"type":"array","items":${emitSchema(t.itemsType, ns, defined)}}`;
    case 'map':
      return `{"type":"map","values":${emitSchema(t.valuesType, ns, defined)}}`;
  }
  const name = type.name as string;
  if (defined.has(name)) return JSON.stringify(name);
  defined.add(name);
  const dot = name.lastIndexOf('.');
  const ownNs = dot < 0 ? '' : name.slice(0, dot);
  // A null-namespace type inside a namespaced one must say so, or it would inherit the namespace.
  let out = `{"name":${JSON.stringify(name)}${dot < 0 && ns !== '' ? ',"namespace":""' : ''},"type":${JSON.stringify(type.typeName)}`;
  if (type.typeName === 'enum') {
    out += `,"symbols":${JSON.stringify(t.symbols)}`;
    if (t.default !== undefined) out += `,"default":${JSON.stringify(t.default)}`;
  } else if (type.typeName === 'fixed') {
    out += `,"size":${t.size}`;
  } else {
    out += `,"fields":[${t.fields.map((f) => emitField(f, ownNs, defined)).join(',')}]`;
  }
  if (type.aliases && type.aliases.length) out += `,"aliases":${JSON.stringify(type.aliases)}`;
  return `${out}}`;
}

function emitField(field: FieldInfo, ns: string, defined: Set<string>): string {
  let out = `{"name":${JSON.stringify(field.name)},"type":${emitSchema(field.type, ns, defined)}`;
  const dflt = field.defaultValue();
  // A union default is the bare value of the first branch: the top-level rendering.
  if (dflt !== undefined) out += `,"default":${avroToJson(field.type, dflt, true)}`;
  if (field.order && field.order !== 'ascending') out += `,"order":${JSON.stringify(field.order)}`;
  if (field.aliases && field.aliases.length) out += `,"aliases":${JSON.stringify(field.aliases)}`;
  return `${out}}`;
}

/** An in-memory schema table: ids 0-7 pre-registered, new schemas from 8 on. */
export class MemorySchemaTable implements SchemaTable {
  private readonly byId: string[] = [...PRE_REGISTERED_SCHEMAS];
  private readonly byJson = new Map<string, number>(PRE_REGISTERED_SCHEMAS.map((json, id) => [json, id]));

  async schemaOf(id: number): Promise<string | undefined> {
    return Number.isInteger(id) && id >= 0 ? this.byId[id] : undefined;
  }

  /** `canonicalJson` must come from canonicalSchemaJson: the text is the identity. */
  async idOf(canonicalJson: string): Promise<number> {
    let id = this.byJson.get(canonicalJson);
    if (id === undefined) {
      id = this.byId.length;
      this.byId.push(canonicalJson);
      this.byJson.set(canonicalJson, id);
    }
    return id;
  }

  async entries(): Promise<SchemaEntry[]> {
    return this.byId.map((json, id) => ({ id, json }));
  }
}
