/**
 * What an engine should read from a columnar output of one of engine-tables.ts's tables, computed
 * from the JSON scan of the same table, and the comparison that names every difference.
 *
 * The columns are those docs/interface.md ("Arrow IPC stream") promises: `row_key` (binary), the
 * FORMATTED key's components by name (STRING utf8, INTEGER int32, LONG int64, null when absent),
 * `family:qualifier` typed by the column's INLINE schema (string, long, int, double, float,
 * boolean, bytes; counters int64; anything else the value's Avro JSON text), and a map family as a
 * map from qualifier to its typed value; the newest version, null when the row has no cell there.
 * A float column holds the float32 nearest the JSON value (Math.fround). A column that is JSON text
 * may also come as the engine's nested type (a Parquet writer may map records, arrays and maps to
 * Parquet's own): its values are then compared with the JSON value read by its Avro schema.
 */
import { parseExactJson, stringifyExactJson } from '../../lib/model/json/exact-json.js';
import type { JsonValue, TableLayout } from '../../lib/model/types.js';
import { rowKeyOfDocument } from '../../lib/rows/row-format.js';
import type { Test } from 'tap';
import type { EngineRead } from './engines.js';

/** A value as read_back.py prints it, after $float became a number. */
type Plain = null | boolean | number | string | { $int: string } | { $bytes: string } | Plain[] | { [key: string]: Plain };

type Kind = 'string' | 'long' | 'int' | 'double' | 'float' | 'boolean' | 'bytes' | 'text';

interface ColumnPlan {
  readonly name: string;
  readonly kind: Kind;
  /** For text columns: the Avro schema (a nested reading is compared through it); undefined when none is inline. */
  readonly schema?: unknown;
  /** A map family: a map of that kind. */
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

function kindOf(spec: { type: string; value?: string }): { kind: Kind; schema?: unknown } {
  if (spec.type === 'COUNTER') return { kind: 'long' };
  if (spec.type !== 'INLINE' || spec.value === undefined) return { kind: 'text' };
  const schema = JSON.parse(spec.value) as unknown;
  // A union of null and one primitive is that primitive's column, null where a cell holds null.
  if (Array.isArray(schema) && schema.length === 2 && schema.includes('null')) {
    const other = kindOf({ type: 'INLINE', value: JSON.stringify(schema[0] === 'null' ? schema[1] : schema[0]) });
    if (other.kind !== 'text') return other;
  }
  const name = typeof schema === 'string' ? schema : (schema as { type?: unknown }).type;
  return typeof name === 'string' && PRIMITIVES.has(name) && (typeof schema === 'string' || name === (schema as { type: string }).type)
    ? { kind: name as Kind }
    : { kind: 'text', schema };
}

/** The value columns of a layout, in the order the docs give them. */
export function columnPlans(layout: TableLayout): ColumnPlan[] {
  const plans: ColumnPlan[] = [];
  for (const group of layout.localityGroups)
    for (const family of group.families) {
      if (family.mapSchema !== undefined) {
        plans.push({
          name: family.name,
          ...kindOf(family.mapSchema),
          map: true,
          cells: (doc) => doc.cells[family.name],
        });
      } else
        for (const c of family.columns)
          plans.push({ name: `${family.name}:${c.name}`, ...kindOf(c.schema), map: false, cells: (doc) => doc.cells[family.name]?.[c.name] });
    }
  return plans;
}

const int = (v: JsonValue): Plain => ({ $int: BigInt(v as number | bigint).toString() });
const bytesOf = (avroJson: JsonValue): Plain => ({ $bytes: Buffer.from(String(avroJson), 'latin1').toString('hex') });

/** A value of a primitive kind as the engine should hand it over. */
function primitive(kind: Exclude<Kind, 'text'>, v: JsonValue): Plain {
  switch (kind) {
    case 'string':
    case 'boolean':
      return v as Plain;
    case 'long':
    case 'int':
      return int(v);
    case 'double':
      return Number(v);
    case 'float':
      return Math.fround(Number(v));
    case 'bytes':
      return bytesOf(v);
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

/**
 * An Avro JSON value read by its schema into the nested form an engine gives: records and maps as
 * objects, arrays as lists, a null-or-one-branch union as its bare value, enums as strings, bytes
 * and fixed as bytes. Unions of two branches that are not null have no nested form (undefined).
 */
function nested(schema: unknown, v: JsonValue): Plain | undefined {
  if (Array.isArray(schema)) {
    const branches = schema.filter((b) => b !== 'null');
    if (branches.length !== 1) return undefined;
    if (v === null) return null;
    const wrapped = v as Record<string, JsonValue>;
    const key = Object.keys(wrapped)[0]!;
    return nested(branches[0], wrapped[key]!);
  }
  const s = (typeof schema === 'string' ? { type: schema } : schema) as {
    type: unknown;
    fields?: { name: string; type: unknown }[];
    items?: unknown;
    values?: unknown;
  };
  if (typeof s.type === 'object') return nested(s.type, v);
  switch (s.type) {
    case 'record': {
      const out: Record<string, Plain> = {};
      for (const f of s.fields!) {
        const got = nested(f.type, (v as Record<string, JsonValue>)[f.name] ?? null);
        if (got === undefined) return undefined;
        out[f.name] = got;
      }
      return out;
    }
    case 'array': {
      const out = (v as JsonValue[]).map((x) => nested(s.items, x));
      return out.includes(undefined) ? undefined : (out as Plain[]);
    }
    case 'map': {
      const out = Object.entries(v as Record<string, JsonValue>).map(([k, x]) => [k, nested(s.values, x)] as const);
      return out.some(([, x]) => x === undefined) ? undefined : (Object.fromEntries(out) as { [key: string]: Plain });
    }
    case 'enum':
      return v as Plain;
    case 'fixed':
      return bytesOf(v);
    case 'null':
      return null;
    default:
      return typeof s.type === 'string' && PRIMITIVES.has(s.type) ? primitive(s.type as Exclude<Kind, 'text'>, v) : undefined;
  }
}

/** A cell's value by its own schema: a union there is written bare (docs/interface.md, "Cells"), not wrapped. */
function nestedCell(schema: unknown, v: JsonValue): Plain | undefined {
  if (!Array.isArray(schema)) return nested(schema, v);
  const branches = schema.filter((b) => b !== 'null');
  return branches.length !== 1 ? undefined : v === null ? null : nested(branches[0], v);
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
function sameValue(plan: Pick<ColumnPlan, 'kind' | 'schema'>, expected: JsonValue | undefined, got: Plain): boolean {
  if (expected === undefined) return got === null;
  // A cell holding null (a union with null): null in a typed column; in a JSON text column (a
  // union of null and a record, say) the text "null" or null. Only a missing cell must be null there.
  if (expected === null) return got === null || (plan.kind === 'text' && got === 'null');
  if (plan.kind !== 'text') return canonical(primitive(plan.kind, expected)) === canonical(got);
  if (typeof got === 'string') {
    let parsed: JsonValue;
    try {
      parsed = parseExactJson(got, 'engine value');
    } catch {
      return false;
    }
    return canonical(parsed) === canonical(expected);
  }
  const want = plan.schema === undefined ? undefined : nestedCell(plan.schema, expected);
  return want !== undefined && canonical(want) === canonical(got);
}

/**
 * Whether an engine's value of a column matches a row's cells there: with one version the newest
 * value (null for none); with more, a list of {timestamp, value} newest first ([] or null for none).
 */
function sameCells(plan: Pick<ColumnPlan, 'kind' | 'schema'>, cells: Cell[] | undefined, got: Plain, versions: boolean): boolean {
  if (!versions) return sameValue(plan, cells?.[0]?.value, got);
  if (got === null) return cells === undefined || cells.length === 0;
  if (!Array.isArray(got) || got.length !== (cells ?? []).length) return false;
  return (cells ?? []).every((c, k) => {
    const el = got[k] as { timestamp?: Plain; value?: Plain } | null;
    return el !== null && canonical(el.timestamp) === canonical(int(c.timestamp)) && sameValue(plan, c.value, el.value ?? null);
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
        check(i, plan.name, sameCells(plan, cells, got, versions), shown(cells, versions), got);
        continue;
      }
      // A map family the row has no cell in: an empty map (the Arrow stream) or null.
      const entries = Object.entries((plan.cells(doc) ?? {}) as Record<string, Cell[]>);
      const gotMap = (got ?? {}) as Record<string, Plain>;
      const ok =
        got !== null && (typeof got !== 'object' || Array.isArray(got))
          ? false
          : Object.keys(gotMap).length === entries.length && entries.every(([q, cells]) => q in gotMap && sameCells(plan, cells, gotMap[q]!, versions));
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

/** pyarrow's and DuckDB's names of the types docs/interface.md promises for each kind. */
const TYPE_NAMES: Record<'pyarrow' | 'duckdb', Record<Exclude<Kind, 'text'> | 'int32' | 'int64', RegExp>> = {
  pyarrow: {
    string: /^(large_)?string$/,
    long: /^int64$/,
    int: /^int32$/,
    double: /^double$/,
    float: /^float$/,
    boolean: /^bool$/,
    bytes: /^(large_)?binary$/,
    int32: /^int32$/,
    int64: /^int64$/,
  },
  duckdb: {
    string: /^VARCHAR$/,
    long: /^BIGINT$/,
    int: /^INTEGER$/,
    double: /^DOUBLE$/,
    float: /^FLOAT$/,
    boolean: /^BOOLEAN$/,
    bytes: /^BLOB$/,
    int32: /^INTEGER$/,
    int64: /^BIGINT$/,
  },
};

/** A JSON text column: a string, or (nested reading) a struct, list or map. */
const TEXT_OR_NESTED: Record<'pyarrow' | 'duckdb', RegExp> = {
  pyarrow: /^((large_)?string|struct<.*|(large_)?list<.*|map<.*)$/,
  duckdb: /^(VARCHAR|STRUCT\(.*|.*\[\]|MAP\(.*)$/,
};

/** The type of a list of {timestamp, value} (more than one version) of values of type `value`. */
function listed(engine: 'pyarrow' | 'duckdb', value: RegExp): RegExp {
  const body = value.source.replace(/^\^|\$$/g, '');
  return engine === 'pyarrow'
    ? new RegExp(`^(large_)?list<(item|element): struct<timestamp: int64( not null)?, value: (${body})>( not null)?>$`)
    : new RegExp(`^STRUCT\\("timestamp" BIGINT, "?value"? (${body})\\)\\[\\]$`);
}

/** Columns whose engine type is not the one the docs promise: "name: type (expected /re/)". */
export function typeMismatches(layout: TableLayout, read: EngineRead, versions = false): string[] {
  const names = TYPE_NAMES[read.engine];
  const want = new Map<string, RegExp>([['row_key', names.bytes]]);
  const format = layout.keyFormat;
  if (format.encoding === 'FORMATTED' && !format.suppressMaterialization)
    for (const c of format.components) want.set(c.name, c.type === 'STRING' ? names.string : c.type === 'INTEGER' ? names.int32 : names.int64);
  for (const plan of columnPlans(layout)) {
    const value = plan.kind === 'text' ? TEXT_OR_NESTED[read.engine] : names[plan.kind];
    const inner = versions ? listed(read.engine, value) : value;
    if (!plan.map) want.set(plan.name, inner);
    else {
      const body = inner.source.replace(/^\^|\$$/g, '');
      // pyarrow's Parquet reader names a map's entries after the column, and its type prints that name (`map<string, int64 ('mlng')>`), for files pyarrow wrote too.
      want.set(
        plan.name,
        read.engine === 'pyarrow' ? new RegExp(`^map<(large_)?string, (${body})( \\('[^']*'\\))?>$`) : new RegExp(`^MAP\\(VARCHAR, (${body})\\)$`),
      );
    }
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
