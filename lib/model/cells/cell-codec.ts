/**
 * A POSTed cell -> EncodedCell (docs/interface.md, "Cells and timestamps"; docs/data-model.md, "Values on the wire"), validated completely so a body
 * is checked before anything is written. Values are stored as Avro JSON text in the column's
 * reader schema, so reads only copy text. Called once per posted cell: parsed types, resolvers,
 * reader schemas and schema ids are all cached.
 */

import { rgError, isRowgateError } from '../../errors.js';
import type { CellSchemaSpec, EncodedCell, JsonValue, SchemaTable, TableLayout, Timestamp } from '../types.js';
import { MAX_TIMESTAMP, timestampFromJson } from './timestamp.js';
import { jsonForMessage, stringifyExactJson } from '../json/exact-json.js';
import { avroResolver, avroTypeOf, type AvroType } from '../avro/avro-types.js';
import { isInt64 } from './int64.js';
import { AvroValueMismatch, avroFromJson, avroToJson } from '../avro/avro-json.js';
import { canonicalSchemaJson, SCHEMA_ID } from '../avro/schema-table.js';
import { cachedColumnPlan, columnPlanOf, columnSpecOf } from '../avro/cell-schema.js';

/** Counters are served with the id of "long" as their writer_schema (REST-67). */
export const COUNTER_SCHEMA_ID = SCHEMA_ID.long;

/** A counter value as served: a JSON number, exact to 64 bits. */
export function renderCounter(value: bigint): string {
  return value.toString();
}

export interface EncodeCellArgs {
  readonly layout: TableLayout;
  readonly family: string;
  readonly qualifier: string;
  readonly timestamp?: JsonValue;
  readonly value: JsonValue;
  readonly writerSchema?: JsonValue;
  readonly schemas: SchemaTable;
  /**
   * Whether the cell's writer_schema is read (revisions 2 and 3). false (revision 1, which has no
   * writer_schema): the value is always in the column's layout schema, and a counter's
   * writer_schema is not checked.
   */
  readonly writerSchemas: boolean;
}

export async function encodeCell(args: EncodeCellArgs): Promise<EncodedCell> {
  // Warm caches (the usual case: one column plan, schema and id per column) finish synchronously.
  const warm = encodeCellCached(args);
  if (warm !== undefined) return warm;
  const { layout, family, qualifier, schemas } = args;
  const spec = columnSpecOf(layout, family, qualifier);
  const column = `${family}:${qualifier}`;
  const timestamp = parseTimestamp(args.timestamp, column);
  const plan = cachedColumnPlan(spec, schemas) ?? (await columnPlanOf(spec, schemas, column));
  const writer = !args.writerSchemas || args.writerSchema == null ? plan.reader : await writerSchemaOf(args.writerSchema, schemas, column);
  const { schema, json } = encodeValue(plan, writer, args.value, column, spec.type);
  const schemaId = cachedIds(schemas).get(schema) ?? (await schemaIdOf(schemas, schema));
  return timestamp === undefined ? { kind: 'value', family, qualifier, schemaId, json } : { kind: 'value', family, qualifier, timestamp, schemaId, json };
}

/**
 * encodeCell without awaiting: the same cell (or the same error, thrown in the same order of
 * checks), or undefined when a cache it needs is cold (column plan, schema of a writer_schema id,
 * id of the schema) and encodeCell must be awaited instead. Callers encoding many cells (import,
 * POST bodies) use it to avoid one promise per cell.
 */
export function encodeCellCached(args: EncodeCellArgs): EncodedCell | undefined {
  const { layout, family, qualifier, schemas } = args;
  const spec = columnSpecOf(layout, family, qualifier);
  if (spec.type === 'COUNTER') {
    if (args.writerSchemas) checkCounterWriterSchema(args.writerSchema, `${family}:${qualifier}`);
    return encodeCounter(family, qualifier, args.value, args.timestamp);
  }

  const column = `${family}:${qualifier}`;
  const timestamp = parseTimestamp(args.timestamp, column);
  const plan = cachedColumnPlan(spec, schemas);
  if (plan === undefined) return undefined;
  let writer: string | undefined;
  if (!args.writerSchemas || args.writerSchema == null) writer = plan.reader;
  else {
    const ws = args.writerSchema;
    if (typeof ws === 'number' && Number.isInteger(ws)) {
      writer = cachedSchemas(schemas).get(ws);
      if (writer === undefined) return undefined;
    } else if (typeof ws === 'bigint') return undefined;
    else writer = writerSchemaOfSync(ws, column);
  }
  const { schema, json } = encodeValue(plan, writer, args.value, column, spec.type);
  const schemaId = cachedIds(schemas).get(schema);
  if (schemaId === undefined) return undefined;
  return timestamp === undefined ? { kind: 'value', family, qualifier, schemaId, json } : { kind: 'value', family, qualifier, timestamp, schemaId, json };
}

/** The kinds of column plain-line.ts writes from a line's bytes, by their canonical reader schema. */
export type PlainKind = 'string' | 'long' | 'int' | 'double' | 'boolean';
const PLAIN_KINDS: ReadonlyMap<string, PlainKind> = new Map([
  ['"string"', 'string'],
  ['"long"', 'long'],
  ['"int"', 'int'],
  ['"double"', 'double'],
  ['"boolean"', 'boolean'],
]);

/** A column whose cells, written without writer_schema, are stored as the value's own JSON text when that text is canonical. */
export interface PlainColumn {
  readonly kind: PlainKind;
  /** The id of the column's reader schema: every cell of it written without writer_schema carries it. */
  readonly schemaId: number;
}

/**
 * Whether cells of family:qualifier written without writer_schema take the plain path of
 * encodeCellCached: no counter, a reader schema that is one primitive type, allowed as a writer
 * (STRICT columns), its id known. Then encodeCellCached stores a value as avroToJson of the same
 * value, which for a canonical JSON text (plain-values.ts says which texts) is that text. null: never plain;
 * undefined: a cache is cold (ask again once a row went through encodeCell).
 */
export function plainColumnOf(layout: TableLayout, family: string, qualifier: string, schemas: SchemaTable): PlainColumn | null | undefined {
  let spec: CellSchemaSpec;
  try {
    spec = columnSpecOf(layout, family, qualifier);
  } catch {
    return null; // not a column of the layout: encodeCellCached answers it with its error
  }
  if (spec.type === 'COUNTER') return null;
  const plan = cachedColumnPlan(spec, schemas);
  if (plan === undefined) return undefined;
  const reader = plan.reader;
  const kind = reader === undefined ? undefined : PLAIN_KINDS.get(reader);
  if (reader === undefined || kind === undefined) return null;
  if (plan.allowedWriters !== undefined && !plan.allowedWriters.has(reader)) return null;
  const schemaId = cachedIds(schemas).get(reader);
  return schemaId === undefined ? undefined : { kind, schemaId };
}

/** Validates the value against its writer schema, resolves it to the reader's: the JSON stored and its schema. */
function encodeValue(
  plan: { readonly reader?: string; readonly allowedWriters?: ReadonlySet<string> },
  writer: string | undefined,
  jsonValue: JsonValue,
  column: string,
  specType: string,
): { schema: string; json: string } {
  const reader = plan.reader;
  if (writer === undefined) {
    throw rgError('RG_ERR_BAD_SCHEMA', `column ${column} (${specType}) has no layout schema to write with: give writer_schema`);
  }
  if (plan.allowedWriters !== undefined && !plan.allowedWriters.has(writer)) {
    throw rgError('RG_ERR_BAD_SCHEMA', `writer schema ${shorten(writer)} is not among the writers of STRICT column ${column}`);
  }
  let type = avroTypeOf(writer);
  let value = readValue(type, jsonValue, column, writer);
  let schema = writer;
  if (reader !== undefined && reader !== writer) {
    type = avroTypeOf(reader);
    value = resolve(avroTypeOf(writer), value, type, column, writer, reader);
    schema = reader;
  }
  return { schema, json: avroToJson(type, value, true) };
}

/**
 * absent/null -> undefined (server time). Otherwise a Java long 0..2^63-1, exact (a bigint above
 * 2^53-1), taken as KijiREST's Jackson took it (timestampFromJson: a fraction truncated, a string
 * of digits read as the number). A negative timestamp is a 400 here: every client error is a 4xx (docs/errors.md), and a
 * silently dropped cell would look like a successful write; only -1, which KijiREST's clients
 * send to mean "skip this cell", is skipped before a cell gets here (row-input.ts).
 */
function parseTimestamp(ts: JsonValue | undefined, column: string): Timestamp | undefined {
  if (ts === undefined || ts === null) return undefined;
  const timestamp = timestampFromJson(ts);
  if (timestamp !== undefined) return timestamp;
  throw rgError(
    'RG_ERR_BAD_TIMESTAMP',
    `timestamp of column ${column} must be an integer of milliseconds from 0 to ${MAX_TIMESTAMP}, got ${shorten(jsonForMessage(ts))}`,
  );
}

function int64Of(v: JsonValue | undefined): bigint | undefined {
  const n = typeof v === 'bigint' ? v : typeof v === 'number' && Number.isInteger(v) ? BigInt(v) : undefined;
  return n !== undefined && isInt64(n) ? n : undefined;
}

/** An integer sets the counter, {"incr": n} adds n; strings ("5") are refused, unlike before 1.2.0. */
function encodeCounter(family: string, qualifier: string, value: JsonValue, ts: JsonValue | undefined): EncodedCell {
  const column = `${family}:${qualifier}`;
  if (typeof value === 'object' && value !== null && !Array.isArray(value)) {
    const keys = Object.keys(value);
    const delta = keys.length === 1 && keys[0] === 'incr' ? int64Of(value.incr) : undefined;
    if (delta === undefined) {
      throw rgError('RG_ERR_BAD_COUNTER', `counter increment of column ${column} must be {"incr": <64-bit integer>}, got ${shorten(jsonForMessage(value))}`);
    }
    if (ts !== undefined && ts !== null) {
      throw rgError('RG_ERR_BAD_COUNTER', `counter increment of column ${column} cannot carry a timestamp (got ${shorten(jsonForMessage(ts))})`);
    }
    return { kind: 'counter-increment', family, qualifier, delta };
  }
  const set = int64Of(value);
  if (set === undefined) {
    throw rgError('RG_ERR_BAD_COUNTER', `counter value of column ${column} must be a 64-bit integer or {"incr": n}, got ${shorten(jsonForMessage(value))}`);
  }
  const timestamp = parseTimestamp(ts, column);
  return timestamp === undefined ? { kind: 'counter-set', family, qualifier, value: set } : { kind: 'counter-set', family, qualifier, timestamp, value: set };
}

/**
 * A counter is a 64-bit integer: its writer_schema, when given, must say so, as the id of "long"
 * (what reads serve for counters, so a row read and written back passes; KijiREST's own tests
 * send 3) or a schema that is "long". The original ignored it; a counter sent with "string" was
 * a client mistake answered 200.
 */
function checkCounterWriterSchema(ws: JsonValue | undefined, column: string): void {
  if (ws === undefined || ws === null || ws === COUNTER_SCHEMA_ID) return;
  let canonical: string | undefined;
  if (typeof ws === 'string' || (typeof ws === 'object' && !Array.isArray(ws))) {
    try {
      canonical = canonicalSchemaJson(ws);
    } catch {
      canonical = undefined;
    }
  }
  if (canonical !== LONG_SCHEMA) {
    throw rgError(
      'RG_ERR_BAD_SCHEMA',
      `writer_schema of counter column ${column} must be "long" (schema id ${COUNTER_SCHEMA_ID}) or absent: a counter is a 64-bit integer, got ${shorten(stringifyExactJson(ws))}`,
    );
  }
}

const LONG_SCHEMA = canonicalSchemaJson('long');

/** writer_schema: an integer is a schema-table id; anything else an Avro schema (also "string"). */
async function writerSchemaOf(ws: JsonValue, schemas: SchemaTable, column: string): Promise<string> {
  if (typeof ws === 'bigint' || (typeof ws === 'number' && Number.isInteger(ws))) {
    const json = typeof ws === 'number' ? (cachedSchemas(schemas).get(ws) ?? (await schemaOf(schemas, ws))) : undefined;
    if (json === undefined) throw rgError('RG_ERR_UNKNOWN_SCHEMA_ID', `writer_schema ${ws} of column ${column} is not in the schema table`);
    return json;
  }
  return writerSchemaOfSync(ws, column);
}

/** writer_schema given as anything but an integer id. */
function writerSchemaOfSync(ws: JsonValue, column: string): string {
  if (typeof ws === 'number' || typeof ws === 'boolean') {
    throw rgError('RG_ERR_BAD_SCHEMA', `writer_schema of column ${column} must be a schema id or an Avro schema, got ${ws}`);
  }
  try {
    return canonicalSchemaJson(ws);
  } catch (e) {
    if (isRowgateError(e)) throw rgError(e.code, `writer_schema of column ${column}: ${e.message}`);
    throw e;
  }
}

/**
 * The value read as Avro JSON of the writer schema. A string schema takes only JSON strings: the
 * original stored any other JSON as its text (123 -> "123"), which hid client mistakes.
 */
function readValue(type: AvroType, json: JsonValue, column: string, writer: string): unknown {
  try {
    return avroFromJson(type, json, true);
  } catch (e) {
    if (e instanceof AvroValueMismatch) {
      throw rgError('RG_ERR_BAD_VALUE', `value of column ${column} does not match its writer schema ${shorten(writer)}: ${e.describe()}`);
    }
    throw e;
  }
}

/** Writer -> reader by Avro schema resolution (promotions, defaults, aliases...), via avsc. */
function resolve(writerType: AvroType, value: unknown, readerType: AvroType, column: string, writer: string, reader: string): unknown {
  // For a top-level union writer only the branch written needs to be readable (as in Avro Java,
  // which resolves lazily; avsc checks every branch up front).
  if (writerType.typeName === 'union:wrapped' && value !== null) {
    const name = Object.keys(value as object)[0];
    writerType = (writerType as AvroType & { types: AvroType[] }).types.find((b) => b.branchName === name) as AvroType;
    value = (value as Record<string, unknown>)[name];
  } else if (writerType.typeName === 'union:wrapped') {
    writerType = avroTypeOf('"null"');
  }
  const resolver = avroResolver(writerType, readerType);
  if (resolver instanceof Error) {
    throw rgError(
      'RG_ERR_BAD_SCHEMA',
      `writer schema ${shorten(writer)} cannot be read with the schema ${shorten(reader)} of column ${column}: ${resolver.message}`,
    );
  }
  try {
    return readerType.fromBuffer(writerType.toBuffer(value), resolver, true);
  } catch (e) {
    throw rgError('RG_ERR_BAD_VALUE', `value of column ${column} cannot be converted to its schema ${shorten(reader)}: ${(e as Error).message}`);
  }
}

// Ids and schemas never change once given (docs/data-model.md, "The schema table"): cached per table, both ways.
const idCaches = new WeakMap<SchemaTable, Map<string, number>>();
const schemaCaches = new WeakMap<SchemaTable, Map<number, string>>();
const CACHE_LIMIT = 10_000;

function cachedIds(schemas: SchemaTable): Map<string, number> {
  let ids = idCaches.get(schemas);
  if (ids === undefined) {
    ids = new Map();
    idCaches.set(schemas, ids);
  }
  return ids;
}

function cachedSchemas(schemas: SchemaTable): Map<number, string> {
  let byId = schemaCaches.get(schemas);
  if (byId === undefined) {
    byId = new Map();
    schemaCaches.set(schemas, byId);
  }
  return byId;
}

async function schemaIdOf(schemas: SchemaTable, canonical: string): Promise<number> {
  const id = await schemas.idOf(canonical);
  const ids = cachedIds(schemas);
  if (ids.size >= CACHE_LIMIT) ids.clear();
  ids.set(canonical, id);
  return id;
}

async function schemaOf(schemas: SchemaTable, id: number): Promise<string | undefined> {
  const json = await schemas.schemaOf(id);
  if (json !== undefined) {
    const byId = cachedSchemas(schemas);
    if (byId.size >= CACHE_LIMIT) byId.clear();
    byId.set(id, json);
  }
  return json;
}

function shorten(text: string): string {
  return text.length > 120 ? `${text.slice(0, 117)}...` : text;
}
