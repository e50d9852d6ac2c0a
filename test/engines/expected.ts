/**
 * What an engine should read from a columnar output of one of engine-tables.ts's tables, computed
 * from the JSON scan of the same table, and the comparison that names every difference.
 *
 * The columns are those docs/interface.md ("Arrow IPC stream", "Parquet") promises: `row_key`
 * (binary), the FORMATTED key's components by name (STRING utf8, INTEGER int32, LONG int64, null
 * when absent), `family:qualifier` typed by the Avro schema of the column's stored values (INLINE,
 * AVRO's default reader, RAW_BYTES bytes; counters int64): primitives as themselves, enums strings,
 * fixed fixed-size binary (DuckDB: BLOB), records structs, arrays lists, maps maps, a union of null
 * and one type that type, a union of several types a sparse union (Arrow) or a struct of its
 * branches (Parquet); a recursive record, or a schema the layout does not hold, the value's Avro
 * JSON text. A map family is a map from qualifier to its typed value; the newest version, null when
 * the row has no cell there. A float column holds the float32 nearest the JSON value (Math.fround).
 * The expected values are the JSON scan's, read here by the schema independently of
 * lib/rows/formats (a bare union cell's branch: the first branch that takes the value).
 */
import { parseExactJson, stringifyExactJson } from '../../lib/model/json/exact-json.js';
import type { CellSchemaSpec, JsonValue, TableLayout } from '../../lib/model/types.js';
import { rowKeyOfDocument } from '../../lib/rows/row-format.js';
import type { Test } from 'tap';
import type { EngineRead } from './engines.js';

/** A value as read_back.py prints it, after $float became a number. */
type Plain = null | boolean | number | string | { $int: string } | { $bytes: string } | Plain[] | { [key: string]: Plain };

type Schema = JsonValue;

/** Which output an engine read: the two map unions differently (Arrow a sparse union, Parquet a struct of branches). */
type Output = 'arrow' | 'parquet';

interface ColumnPlan {
  readonly name: string;
  /** The Avro schema of the column's stored values; undefined: the column is the value's Avro JSON text. */
  readonly schema?: Schema;
  /** A map family: a map of that type. */
  readonly map: boolean;
  /** A row document's cells of the column (newest first), or of the map family by qualifier. */
  readonly cells: (doc: RowDoc) => Cell[] | Record<string, Cell[]> | undefined;
}

type Cell = { timestamp: JsonValue; value: JsonValue };
interface RowDoc {
  readonly entityId: JsonValue;
  readonly cells: Record<string, Record<string, Cell[]>>;
}

const PRIMITIVES = new Set(['string', 'long', 'int', 'double', 'float', 'boolean', 'bytes']);

type Obj = { [key: string]: JsonValue };
const isObj = (v: unknown): v is Obj => v !== null && typeof v === 'object' && !Array.isArray(v);

/**
 * A schema with its named types resolved: every name reference replaced by its definition (a
 * reference to a record still being defined, a recursive type, or a record without fields makes
 * the schema undefined: JSON text).
 */
function resolved(schema: Schema, names = new Map<string, Schema>(), open = new Set<string>()): Schema | undefined {
  if (typeof schema === 'string') {
    if (PRIMITIVES.has(schema) || schema === 'null') return schema;
    if (open.has(schema)) return undefined;
    return names.get(schema);
  }
  if (Array.isArray(schema)) {
    const out = schema.map((b) => resolved(b, names, open));
    return out.includes(undefined) ? undefined : (out as Schema[]);
  }
  if (!isObj(schema)) return undefined;
  const type = schema['type']!;
  if (typeof type !== 'string' || !['record', 'error', 'enum', 'fixed', 'array', 'map'].includes(type)) return resolved(type, names, open);
  // A named type's full name (the union branch name Avro JSON wraps its values in).
  const short = typeof schema['name'] === 'string' ? schema['name'] : undefined;
  const name = short !== undefined && typeof schema['namespace'] === 'string' && !short.includes('.') ? `${schema['namespace']}.${short}` : short;
  if (type === 'enum' || type === 'fixed') {
    const named = { ...schema, name: name ?? '' };
    if (name !== undefined) names.set(name, named);
    return named;
  }
  if (type === 'array') {
    const items = resolved(schema['items']!, names, open);
    return items === undefined ? undefined : { type, items };
  }
  if (type === 'map') {
    const values = resolved(schema['values']!, names, open);
    return values === undefined ? undefined : { type, values };
  }
  if (name !== undefined) open.add(name);
  const fields: Obj[] = [];
  // A record without fields has no Parquet group: JSON text too.
  if ((schema['fields'] as Obj[]).length === 0) return undefined;
  for (const f of schema['fields'] as Obj[]) {
    const t = resolved(f['type']!, names, open);
    if (t === undefined || t === 'null') return undefined;
    fields.push({ name: f['name']!, type: t });
  }
  const out = { type: 'record', name: name ?? '', fields };
  if (name !== undefined) {
    open.delete(name);
    names.set(name, out);
  }
  return out;
}

/** The stored values' schema of a column spec (lib/model/avro/cell-schema.ts): INLINE, AVRO's default reader given inline, RAW_BYTES bytes, counters long. */
function schemaOf(spec: CellSchemaSpec): Schema | undefined {
  const text =
    spec.type === 'COUNTER'
      ? '"long"'
      : spec.type === 'INLINE'
        ? spec.value
        : spec.type === 'AVRO'
          ? spec.defaultReader?.json
          : spec.type === 'RAW_BYTES'
            ? '"bytes"'
            : undefined;
  return text === undefined ? undefined : resolved(parseExactJson(text, 'schema'));
}

/** The value columns of a layout, in the order the docs give them. */
export function columnPlans(layout: TableLayout): ColumnPlan[] {
  const plans: ColumnPlan[] = [];
  for (const group of layout.localityGroups)
    for (const family of group.families) {
      if (family.mapSchema !== undefined) {
        plans.push({ name: family.name, schema: schemaOf(family.mapSchema), map: true, cells: (doc) => doc.cells[family.name] });
      } else
        for (const c of family.columns)
          plans.push({ name: `${family.name}:${c.name}`, schema: schemaOf(c.schema), map: false, cells: (doc) => doc.cells[family.name]?.[c.name] });
    }
  return plans;
}

const int = (v: JsonValue): Plain => ({ $int: BigInt(v as number | bigint).toString() });
const bytesOf = (avroJson: JsonValue): Plain => ({ $bytes: Buffer.from(String(avroJson), 'latin1').toString('hex') });

/** A resolved schema's type name: a primitive's, or the complex type's. */
const typeName = (schema: Schema): string => (typeof schema === 'string' ? schema : Array.isArray(schema) ? 'union' : String((schema as Obj)['type']));

/** The non-null branches of a union. */
const branchesOf = (union: Schema[]): Schema[] => union.filter((b) => b !== 'null');

/** The name Avro JSON wraps a union branch in: a named type's name, else its type name. */
const branchName = (schema: Schema): string =>
  isObj(schema) && typeof schema['name'] === 'string' && schema['name'] !== '' ? schema['name'] : typeName(schema);

/** Whether a bare Avro JSON value is one of `schema` (the first branch that takes a bare union value is its branch). */
function takes(schema: Schema, v: JsonValue): boolean {
  switch (typeName(schema)) {
    case 'null':
      return v === null;
    case 'boolean':
      return typeof v === 'boolean';
    case 'int':
    case 'long':
      return typeof v === 'bigint' || (typeof v === 'number' && Number.isInteger(v));
    case 'float':
    case 'double':
      return typeof v === 'number' || typeof v === 'bigint';
    case 'string':
    case 'bytes':
    case 'fixed':
      return typeof v === 'string';
    case 'enum':
      return typeof v === 'string' && ((schema as Obj)['symbols'] as string[]).includes(v);
    case 'array':
      return Array.isArray(v);
    default:
      return isObj(v);
  }
}

/**
 * An Avro JSON value of a resolved schema as the engine should hand it over: records and maps as
 * objects, arrays as lists, a union of null and one type as its bare value, a union of several
 * types as its branch's value (Arrow, a sparse union) or an object of every branch, null but the
 * value's (Parquet, a struct), enums as strings, bytes and fixed as bytes, longs and ints exact.
 * `bare`: a union value is its branch's value without the {branch: value} wrapping (a cell's own
 * union, docs/interface.md "Cells").
 */
function engineValue(schema: Schema, v: JsonValue, output: Output, bare = false): Plain {
  if (Array.isArray(schema)) {
    if (v === null) return null;
    const branches = branchesOf(schema);
    let branch: Schema;
    let value: JsonValue;
    if (bare) {
      branch = branches.find((b) => takes(b, v))!;
      value = v;
    } else {
      const [name, inner] = Object.entries(v as Obj)[0]!;
      branch = branches.find((b) => branchName(b) === name)!;
      value = inner;
    }
    const got = engineValue(branch, value, output);
    if (branches.length === 1 || output === 'arrow') return got;
    return Object.fromEntries(branches.map((b) => [branchName(b), b === branch ? got : null]));
  }
  switch (typeName(schema)) {
    case 'string':
    case 'boolean':
    case 'enum':
      return v as Plain;
    case 'long':
    case 'int':
      return int(v);
    case 'double':
      return Number(v);
    case 'float':
      return Math.fround(Number(v));
    case 'bytes':
    case 'fixed':
      return bytesOf(v);
    case 'array':
      return (v as JsonValue[]).map((x) => engineValue((schema as Obj)['items']!, x, output));
    case 'map':
      return Object.fromEntries(Object.entries(v as Obj).map(([k, x]) => [k, engineValue((schema as Obj)['values']!, x, output)]));
    default: {
      const out: Record<string, Plain> = {};
      for (const f of (schema as Obj)['fields'] as Obj[]) out[f['name'] as string] = engineValue(f['type']!, (v as Obj)[f['name'] as string] ?? null, output);
      return out;
    }
  }
}

/** Sorted-key compact JSON of a plain value: the comparison key. */
function canonical(v: unknown): string {
  const sort = (x: unknown): unknown =>
    Array.isArray(x)
      ? x.map(sort)
      : x !== null && typeof x === 'object'
        ? Object.fromEntries(
            Object.keys(x)
              .sort()
              .map((k) => [k, sort((x as Record<string, unknown>)[k])]),
          )
        : typeof x === 'number' && Object.is(x, -0)
          ? '-0'
          : x;
  return stringifyExactJson(sort(v) as JsonValue);
}

/** read_back.py's {"$float": repr} as the number it names (repr round-trips a double). */
function floatsAsNumbers(v: unknown): Plain {
  if (Array.isArray(v)) return v.map(floatsAsNumbers);
  if (v !== null && typeof v === 'object') {
    const o = v as Record<string, unknown>;
    if (typeof o['$float'] === 'string' && Object.keys(o).length === 1) return Number(o['$float']);
    return Object.fromEntries(Object.entries(o).map(([k, x]) => [k, floatsAsNumbers(x)]));
  }
  return v as Plain;
}

/** Whether an engine's value of a column matches the JSON scan's (undefined: the row has no cell). */
function sameValue(plan: Pick<ColumnPlan, 'schema'>, expected: JsonValue | undefined, got: Plain, output: Output): boolean {
  if (expected === undefined) return got === null;
  if (plan.schema !== undefined) return canonical(engineValue(plan.schema, expected, output, true)) === canonical(got);
  // JSON text: the value's Avro JSON, exact.
  if (typeof got !== 'string') return false;
  try {
    return canonical(parseExactJson(got, 'engine value')) === canonical(expected);
  } catch {
    return false;
  }
}

/**
 * Whether an engine's value of a column matches a row's cells there: with one version the newest
 * value (null for none); with more, a list of {timestamp, value} newest first ([] or null for none).
 */
function sameCells(plan: Pick<ColumnPlan, 'schema'>, cells: Cell[] | undefined, got: Plain, versions: boolean, output: Output): boolean {
  if (!versions) return sameValue(plan, cells?.[0]?.value, got, output);
  if (got === null) return cells === undefined || cells.length === 0;
  if (!Array.isArray(got) || got.length !== (cells ?? []).length) return false;
  return (cells ?? []).every((c, k) => {
    const el = got[k] as { timestamp?: Plain; value?: Plain } | null;
    return el !== null && canonical(el.timestamp) === canonical(int(c.timestamp)) && sameValue(plan, c.value, el.value ?? null, output);
  });
}

/** A row's cells as the expected side of a message: values, or {timestamp, value} lists. */
function shown(cells: Cell[] | undefined, versions: boolean): unknown {
  return versions ? (cells ?? []).map((c) => ({ timestamp: c.timestamp, value: c.value })) : (cells?.[0]?.value ?? null);
}

export interface Comparison {
  /** Values compared equal (rows x columns, ids and row key included). */
  readonly same: number;
  /** Values compared in all. */
  readonly compared: number;
  /** The first differences, each naming row, column, expected and got. */
  readonly differences: string[];
}

/**
 * Compares an engine's rows of a table with the JSON scan's row documents (CR LF framed text);
 * `versions`: the scan asked for more than one version (columns are lists), with the same
 * `versions` as the JSON scan.
 */
export function compareWithJson(layout: TableLayout, jsonScan: string, read: EngineRead, versions = false): Comparison {
  const lines = jsonScan.split('\r\n').filter((l) => l !== '');
  const plans = columnPlans(layout);
  const output = outputOf(read);
  const differences: string[] = [];
  let same = 0;
  let compared = 0;
  const check = (row: number, column: string, ok: boolean, expected: unknown, got: unknown) => {
    compared++;
    if (ok) same++;
    else if (differences.length < 12)
      differences.push(`row ${row} ${column}: expected ${canonical(expected ?? null)}, ${read.engine} read ${canonical(got ?? null)}`);
  };
  if (read.rows.length !== lines.length) differences.push(`${read.engine} read ${read.rows.length} rows, the JSON scan has ${lines.length}`);
  const format = layout.keyFormat;
  lines.forEach((line, i) => {
    const doc = parseExactJson(line, 'row') as unknown as RowDoc;
    const row = floatsAsNumbers(read.rows[i] ?? {}) as Record<string, Plain>;
    const key = { $bytes: rowKeyOfDocument(line, format, 3).toString('hex') };
    check(i, 'row_key', canonical(key) === canonical(row['row_key']), key, row['row_key']);
    if (format.encoding === 'FORMATTED' && !format.suppressMaterialization) {
      const ids = doc.entityId as JsonValue[];
      format.components.forEach((c, k) => {
        const v = ids[k] ?? null;
        const want = v === null ? null : c.type === 'STRING' ? v : int(v);
        check(i, c.name, canonical(want) === canonical(row[c.name] ?? null), want, row[c.name]);
      });
    }
    for (const plan of plans) {
      const got = row[plan.name] ?? null;
      if (!plan.map) {
        const cells = plan.cells(doc) as Cell[] | undefined;
        check(i, plan.name, sameCells(plan, cells, got, versions, output), shown(cells, versions), got);
        continue;
      }
      // A map family the row has no cell in: an empty map (the Arrow stream) or null.
      const entries = Object.entries((plan.cells(doc) ?? {}) as Record<string, Cell[]>);
      const gotMap = (got ?? {}) as Record<string, Plain>;
      const ok =
        got !== null && (typeof got !== 'object' || Array.isArray(got))
          ? false
          : Object.keys(gotMap).length === entries.length && entries.every(([q, cells]) => q in gotMap && sameCells(plan, cells, gotMap[q]!, versions, output));
      check(i, plan.name, ok, Object.fromEntries(entries.map(([q, cells]) => [q, shown(cells, versions)])), got);
    }
  });
  return { same, compared, differences };
}

/** The column names an engine should give, in order: row_key, the key components, the value columns. */
export function expectedColumnNames(layout: TableLayout): string[] {
  const format = layout.keyFormat;
  const ids = format.encoding === 'FORMATTED' && !format.suppressMaterialization ? format.components.map((c) => c.name) : [];
  return ['row_key', ...ids, ...columnPlans(layout).map((p) => p.name)];
}

/** Which output a file is (read_back.py's files: .parquet, or an Arrow stream). */
const outputOf = (read: EngineRead): Output => (read.file.endsWith('.parquet') ? 'parquet' : 'arrow');

/** pyarrow's and DuckDB's names of the primitive types docs/interface.md promises (regex sources). */
const LEAF_NAMES: Record<'pyarrow' | 'duckdb', Record<string, string>> = {
  pyarrow: {
    string: '(large_)?string',
    enum: '(large_)?string',
    long: 'int64',
    int: 'int32',
    double: 'double',
    float: 'float',
    boolean: 'bool',
    bytes: '(large_)?binary',
  },
  duckdb: { string: 'VARCHAR', enum: 'VARCHAR', long: 'BIGINT', int: 'INTEGER', double: 'DOUBLE', float: 'FLOAT', boolean: 'BOOLEAN', bytes: 'BLOB' },
};

const escaped = (name: string): string => name.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

/** A struct's fields as the engine prints them: `name: type` (pyarrow) or `name type`, the name maybe quoted (DuckDB). */
function structOf(engine: 'pyarrow' | 'duckdb', fields: [string, string][]): string {
  return engine === 'pyarrow'
    ? `struct<${fields.map(([n, t]) => `${escaped(n)}: ${t}`).join(', ')}>`
    : `STRUCT\\(${fields.map(([n, t]) => `"?${escaped(n)}"? ${t}`).join(', ')}\\)`;
}

/**
 * The engine's type of a column of `schema` (undefined: JSON text) as a regex source: what
 * docs/interface.md's tables promise, Arrow's sparse union for a union of several types and
 * Parquet's struct of its branches.
 */
function typePattern(engine: 'pyarrow' | 'duckdb', output: Output, schema: Schema | undefined): string {
  if (schema === undefined) return LEAF_NAMES[engine]['string']!;
  if (Array.isArray(schema)) {
    const branches = branchesOf(schema);
    if (branches.length === 1) return typePattern(engine, output, branches[0]!);
    const parts = branches.map((b) => [branchName(b), typePattern(engine, output, b)] as [string, string]);
    if (output === 'parquet') return structOf(engine, parts);
    return engine === 'pyarrow'
      ? `sparse_union<${parts.map(([n, t], i) => `${escaped(n)}: ${t}=${i}`).join(', ')}>`
      : `UNION\\(${parts.map(([n, t]) => `"?${escaped(n)}"? ${t}`).join(', ')}\\)`;
  }
  const o = schema as Obj;
  switch (typeName(schema)) {
    case 'fixed':
      return engine === 'pyarrow' ? `fixed_size_binary\\[${String(o['size'])}\\]` : 'BLOB';
    case 'array': {
      const items = typePattern(engine, output, o['items']!);
      return engine === 'pyarrow' ? `(large_)?list<(item|element): ${items}>` : `${items}\\[\\]`;
    }
    case 'map':
      return mapPattern(engine, typePattern(engine, output, o['values']!));
    case 'record':
      return structOf(
        engine,
        (o['fields'] as Obj[]).map((f) => [f['name'] as string, typePattern(engine, output, f['type']!)]),
      );
    default:
      return LEAF_NAMES[engine][typeName(schema)]!;
  }
}

/** A map from a string to `value`: pyarrow's Parquet reader names a map's entries after the column, and its type prints that name (`map<string, int64 ('mlng')>`), for files pyarrow wrote too. */
function mapPattern(engine: 'pyarrow' | 'duckdb', value: string): string {
  return engine === 'pyarrow' ? `map<(large_)?string, (${value})( \\('[^']*'\\))?>` : `MAP\\(VARCHAR, (${value})\\)`;
}

/** The type of a list of {timestamp, value} (more than one version) of values of type `value`. */
function listed(engine: 'pyarrow' | 'duckdb', value: string): string {
  return engine === 'pyarrow'
    ? `(large_)?list<(item|element): struct<timestamp: int64( not null)?, value: (${value})>( not null)?>`
    : `STRUCT\\("timestamp" BIGINT, "?value"? (${value})\\)\\[\\]`;
}

/** Columns whose engine type is not the one the docs promise: "name: type (expected /re/)". */
export function typeMismatches(layout: TableLayout, read: EngineRead, versions = false): string[] {
  const engine = read.engine;
  const names = LEAF_NAMES[engine];
  const want = new Map<string, RegExp>([['row_key', new RegExp(`^${names['bytes']!}$`)]]);
  const format = layout.keyFormat;
  if (format.encoding === 'FORMATTED' && !format.suppressMaterialization)
    for (const c of format.components) want.set(c.name, new RegExp(`^${names[c.type === 'STRING' ? 'string' : c.type === 'INTEGER' ? 'int' : 'long']!}$`));
  for (const plan of columnPlans(layout)) {
    const value = typePattern(engine, outputOf(read), plan.schema);
    const inner = versions ? listed(engine, value) : value;
    want.set(plan.name, new RegExp(`^${plan.map ? mapPattern(engine, inner) : inner}$`));
  }
  return read.columns
    .filter(([name, type]) => !(want.get(name)?.test(type) ?? false))
    .map(([name, type]) => `${name}: ${type} (expected ${want.get(name) ?? 'no such column'})`);
}

/**
 * Checks one engine's reading of a file against the JSON scan of the same rows: the column names,
 * their types, the row count and every value. `what` names the file and engine in each message.
 */
export function checkAgainstJson(t: Test, what: string, layout: TableLayout, read: EngineRead, jsonScan: string, rows: number, versions = false): void {
  t.same(
    read.columns.map(([name]) => name),
    expectedColumnNames(layout),
    `${what}: the columns`,
  );
  t.same(typeMismatches(layout, read, versions), [], `${what}: every column has the type the docs promise`);
  t.equal(read.rows.length, rows, `${what}: ${rows} rows`);
  const c = compareWithJson(layout, jsonScan, read, versions);
  t.same(c.differences, [], `${what}: every value as the JSON scan has it`);
  t.equal(c.same, c.compared, `${what}: ${c.same} of ${c.compared} values equal`);
}
