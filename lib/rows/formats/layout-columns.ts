/**
 * A table's rows as typed columns, from the layout (issue #30): the one column plan the columnar
 * formats share, so the Arrow IPC stream and Parquet (both from arrow-columns.ts, which maps the
 * column types below to Arrow's) name, type and fill their columns alike.
 *
 * Columns: `row_key` (bytes), the entity id's components for FORMATTED keys (STRING string, INTEGER
 * int, LONG long; null where a nullable component is absent), then one column a family column named
 * `family:qualifier` and one a map family named `family`. A column's type is its cell schema's:
 * the INLINE schema, an AVRO column's default reader given inline (its cells are stored in it:
 * lib/model/avro/cell-schema.ts), bytes for RAW_BYTES, long for counters. From the Avro schema:
 *
 * - string, long, int, double, float, boolean, bytes: that type; enum: string (its symbol);
 *   fixed: `fixed` of its size;
 * - record: `record` of its fields, each typed the same way; array: `list`; map: `map` (string keys);
 * - a union of null and one type: that type, null where the value is null;
 * - a union of several types besides null: `union` of those branches, named as Avro JSON names
 *   them (`int`, `string`, a named type's full name); null where the value is null;
 * - `json` (the value's Avro JSON text, exact) for what has no finite column type: a record that
 *   refers to itself (recursive named types), a record without fields (no Parquet group has none),
 *   a field of type null, and cells whose schema the layout does not hold (CLASS, AVRO by uid or
 *   without a default reader, PROTOBUF).
 *
 * Every part of a column may be null (the formats make every field nullable): Avro's "not null" is
 * not carried. With one version (the default) a column holds the newest value, null when the row
 * has no cell there; with more, a list of {timestamp, value} newest first. A map family is a map
 * from qualifier to that.
 *
 * JavaScript values handed to the formats: string, bigint (long), number (int, double, float),
 * boolean, Uint8Array (bytes, fixed), string (json); record an object by field name; list an array;
 * map a Map<string, value>; union its Avro JSON wrapped form `{branch: value}` (one key) or null;
 * versions lists are arrays of {timestamp: bigint, value}; map families Map<string, value>.
 *
 * Values are read from the cell's stored Avro JSON text: primitives by the fast readers below (the
 * scan's hot path), everything else by the exact JSON parser and lib/model/avro/avro-json.ts's
 * reader, so longs inside records keep all 64 bits and a union cell, written bare (docs/interface.md,
 * "Cells"), resolves to its branch as the Avro export resolves it (the first branch that takes it).
 */
import { rgError } from '../../errors.js';
import { avroFromJson } from '../../model/avro/avro-json.js';
import { avroTypeOf, type AvroType } from '../../model/avro/avro-types.js';
import { canonicalSchemaJson } from '../../model/avro/schema-table.js';
import { parseExactJson } from '../../model/json/exact-json.js';
import { plainString } from '../../model/json/plain-string.js';
import { storedSchemaText } from '../../model/avro/cell-schema.js';
import { componentsOrNone } from '../../model/keys/row-key.js';
import type { CellOut, CellSchemaSpec, RowKeyFormat, RowOut, TableLayout } from '../../model/types.js';

export type ValueType = 'string' | 'long' | 'int' | 'double' | 'float' | 'boolean' | 'bytes' | 'json';
export type IdType = 'string' | 'int' | 'long';

/** A named part of a record or union. */
export interface NamedType {
  readonly name: string;
  readonly type: ColumnType;
}

/** A column's (or a part's) type, which each format maps to its own. */
export type ColumnType =
  | { readonly kind: ValueType }
  | { readonly kind: 'fixed'; readonly size: number }
  | { readonly kind: 'record'; readonly fields: readonly NamedType[] }
  | { readonly kind: 'list'; readonly items: ColumnType }
  | { readonly kind: 'map'; readonly values: ColumnType }
  | { readonly kind: 'union'; readonly branches: readonly NamedType[] };

/** A reader of a cell's stored JSON text into the column's JavaScript value. */
export type Decode = (json: string) => unknown;

const BIGINT_TEXT = /^-?[0-9]+$/;
/** A plain JSON number, which Number() reads as JSON does; anything else goes through the exact parser. */
const NUMBER_TEXT = /^-?(?:0|[1-9][0-9]*)(?:\.[0-9]+)?(?:[eE][+-]?[0-9]+)?$/;
const exact = (json: string): unknown => parseExactJson(json, 'value');

/** A string value's JSON text: without escapes, the text between the quotes (json/plain-string.ts). */
const stringOf = (j: string): string => plainString(j) ?? String(JSON.parse(j));

/** Readers of a primitive value's JSON text (the stored cell's) into the JavaScript value of its type. */
const DECODE: Readonly<Record<ValueType, Decode>> = {
  string: stringOf,
  long: (j) => (BIGINT_TEXT.test(j) ? BigInt(j) : BigInt(exact(j) as number)),
  int: (j) => Number(j),
  double: (j) => (NUMBER_TEXT.test(j) ? Number(j) : Number(exact(j))),
  float: (j) => (NUMBER_TEXT.test(j) ? Number(j) : Number(exact(j))),
  boolean: (j) => j === 'true',
  // Avro JSON writes bytes as a string of code points 0-255.
  bytes: (j) => new Uint8Array(Buffer.from(stringOf(j), 'latin1')),
  json: (j) => j,
};

const JSON_TYPE: ColumnType = { kind: 'json' };

/** An Avro value (avro-json.ts's in-memory form) into the column's JavaScript value. */
type Convert = (v: unknown) => unknown;
const same: Convert = (v) => v;

/** A schema part with no finite column type: the whole column becomes JSON text. */
class Unmappable extends Error {}

/** avsc's view of a type, as avro-json.ts reads it. */
type AvscType = AvroType & {
  readonly types: AvroType[];
  readonly size: number;
  readonly itemsType: AvroType;
  readonly valuesType: AvroType;
  readonly fields: { readonly name: string; readonly type: AvroType }[];
};

const LEAVES: Readonly<Record<string, ValueType>> = {
  string: 'string',
  'abstract:long': 'long',
  long: 'long',
  int: 'int',
  double: 'double',
  float: 'float',
  boolean: 'boolean',
  bytes: 'bytes',
  enum: 'string',
};

/**
 * The column type of an avsc type and the converter of its values; `open` holds the records being
 * walked, so one that refers to itself is found (Unmappable).
 */
function planOf(avro: AvroType, open: Set<AvroType>): { type: ColumnType; convert: Convert } {
  const t = avro as AvscType;
  const leaf = LEAVES[t.typeName];
  if (leaf !== undefined) return { type: { kind: leaf }, convert: same };
  switch (t.typeName) {
    case 'fixed':
      return { type: { kind: 'fixed', size: t.size }, convert: same };
    case 'array': {
      const items = planOf(t.itemsType, open);
      return { type: { kind: 'list', items: items.type }, convert: (v) => (v as unknown[]).map(items.convert) };
    }
    case 'map': {
      const values = planOf(t.valuesType, open);
      return {
        type: { kind: 'map', values: values.type },
        convert: (v) => new Map(Object.entries(v as Record<string, unknown>).map(([k, x]) => [k, values.convert(x)])),
      };
    }
    case 'record':
    case 'error': {
      if (open.has(avro)) throw new Unmappable(`record ${avro.name ?? ''} refers to itself`);
      // Parquet has no group without fields (a schema element of no children is a leaf without a type).
      if (t.fields.length === 0) throw new Unmappable(`record ${avro.name ?? ''} has no fields`);
      open.add(avro);
      const fields = t.fields.map((f) => ({ name: f.name, ...planOf(f.type, open) }));
      open.delete(avro);
      return {
        type: { kind: 'record', fields: fields.map((f) => ({ name: f.name, type: f.type })) },
        convert: (v) => {
          const record = v as Record<string, unknown>;
          const out: Record<string, unknown> = {};
          for (const f of fields) out[f.name] = f.convert(record[f.name]);
          return out;
        },
      };
    }
    case 'union:wrapped': {
      const branches = t.types.filter((b) => b.typeName !== 'null').map((b) => ({ name: b.branchName as string, ...planOf(b, open) }));
      if (branches.length === 0) throw new Unmappable('a union of null alone');
      // avro-json.ts's values of a union: null, or {branchName: value}.
      if (branches.length === 1) {
        const { name, type, convert } = branches[0]!;
        return { type, convert: (v) => (v === null ? null : convert((v as Record<string, unknown>)[name])) };
      }
      const byName = new Map(branches.map((b) => [b.name, b.convert]));
      return {
        type: { kind: 'union', branches: branches.map((b) => ({ name: b.name, type: b.type })) },
        convert: (v) => {
          if (v === null) return null;
          const [name, value] = Object.entries(v as Record<string, unknown>)[0]!;
          return { [name]: byName.get(name)!(value) };
        },
      };
    }
    default:
      throw new Unmappable(`no column type for Avro ${t.typeName}`);
  }
}

/** A column's type and the reader of its cells' JSON text. */
interface CellPlan {
  readonly type: ColumnType;
  readonly decode: Decode;
  /** A primitive column of a union with null: its cells may hold `null` (the text), read as null. */
  readonly nullable: boolean;
}

/** The plan of a cell spec: primitives (nullable or not) by the fast readers, the rest through avro-json.ts. */
export function cellPlanOf(spec: CellSchemaSpec): CellPlan {
  const text = storedSchemaText(spec);
  if (text === undefined) return { type: JSON_TYPE, decode: DECODE.json, nullable: false };
  const avro = avroTypeOf(canonicalSchemaJson(parseExactJson(text, 'column schema')));
  let plan: { type: ColumnType; convert: Convert };
  try {
    plan = planOf(avro, new Set());
  } catch (e) {
    if (e instanceof Unmappable) return { type: JSON_TYPE, decode: DECODE.json, nullable: false };
    throw e;
  }
  const { type } = plan;
  if (type.kind in DECODE) {
    const decode = DECODE[type.kind as ValueType];
    // A cell of a union is written bare (docs/interface.md, "Cells"): null, or the branch's value.
    const nullable = (avro as AvscType).typeName === 'union:wrapped';
    return { type, decode: nullable ? (j) => (j === 'null' ? null : decode(j)) : decode, nullable };
  }
  const convert = plan.convert;
  return { type, decode: (j) => convert(avroFromJson(avro, parseExactJson(j, 'value'), true)), nullable: false };
}

/** One column after row_key and the id components. */
export interface DataColumn {
  readonly name: string;
  readonly type: ColumnType;
  /** A map family: a map from qualifier to the value (or list). */
  readonly map: boolean;
  /** versions > 1: a list of {timestamp, value} newest first instead of the newest value. */
  readonly listed: boolean;
  /** The reader of a cell's JSON text (a map family's: of each qualifier's). */
  readonly decode: Decode;
  /** Its cells may hold `null` (a primitive of a union with null). */
  readonly nullable: boolean;
}

export interface IdColumn {
  readonly name: string;
  readonly type: IdType;
}

/** The column plan of a layout at a number of versions (1: newest value; more: lists). */
export class LayoutColumns {
  readonly idColumns: readonly IdColumn[];
  readonly columns: readonly DataColumn[];
  /** Where a cell goes: by family, a map family's column or a group family's columns by qualifier (built once, not a row). */
  private readonly slots = new Map<string, { map: number; decode: Decode } | Map<string, { at: number; decode: Decode }>>();
  private readonly mapSlots: number[] = [];
  private readonly listed: boolean;

  constructor(
    private readonly layout: TableLayout,
    private readonly versions: number,
  ) {
    this.listed = versions > 1;
    const format = layout.keyFormat;
    this.idColumns =
      format.encoding === 'FORMATTED' && !format.suppressMaterialization
        ? format.components.map((c) => ({ name: c.name, type: c.type === 'STRING' ? 'string' : c.type === 'INTEGER' ? 'int' : 'long' }))
        : [];
    const columns: DataColumn[] = [];
    // A data column's index in a row's values: after row_key and the id components.
    const first = 1 + this.idColumns.length;
    for (const group of layout.localityGroups)
      for (const family of group.families) {
        if (family.mapSchema !== undefined) {
          const { type, decode, nullable } = cellPlanOf(family.mapSchema);
          this.slots.set(family.name, { map: first + columns.length, decode });
          this.mapSlots.push(first + columns.length);
          columns.push({ name: family.name, type, map: true, listed: this.listed, decode, nullable });
        } else {
          const byQualifier = new Map<string, { at: number; decode: Decode }>();
          for (const c of family.columns) {
            const { type, decode, nullable } = cellPlanOf(c.schema);
            byQualifier.set(c.name, { at: first + columns.length, decode });
            columns.push({ name: `${family.name}:${c.name}`, type, map: false, listed: this.listed, decode, nullable });
          }
          this.slots.set(family.name, byQualifier);
        }
      }
    this.columns = columns;
  }

  /** Column names in order: row_key, the id components, the data columns. */
  names(): string[] {
    return ['row_key', ...this.idColumns.map((c) => c.name), ...this.columns.map((c) => c.name)];
  }

  /**
   * A row's values in names() order into `out` (row_key a Uint8Array view of the key; null where
   * absent; lists and maps as the header says).
   */
  rowValues(row: RowOut, out: unknown[]): void {
    const at = this.keyValues(row.rowKey, out);
    // Each column starts empty (null, or an empty list); map families an empty map.
    for (let i = at; i < at + this.columns.length; i++) out[i] = this.listed ? [] : null;
    for (const i of this.mapSlots) out[i] = new Map<string, unknown>();
    // One pass over the cells as stored (a column's newest first): the first cell of a column is
    // its newest value; with versions > 1 the first `versions` are its list.
    for (const cell of row.cells) {
      const slot = this.slots.get(cell.family);
      if (slot === undefined) continue;
      if (slot instanceof Map) {
        const column = slot.get(cell.qualifier);
        if (column === undefined) continue;
        if (!this.listed) {
          if (out[column.at] === null) out[column.at] = decodeOrThrow(column.decode, cell);
        } else this.addVersion(out[column.at] as unknown[], column.decode, cell);
      } else {
        const map = out[slot.map] as Map<string, unknown>;
        if (!this.listed) {
          if (!map.has(cell.qualifier)) map.set(cell.qualifier, decodeOrThrow(slot.decode, cell));
        } else {
          let list = map.get(cell.qualifier) as unknown[] | undefined;
          if (list === undefined) map.set(cell.qualifier, (list = []));
          this.addVersion(list, slot.decode, cell);
        }
      }
    }
  }

  /**
   * The values of row_key and the id components (the first columns) of a row key into `out`; the
   * index of the first data column.
   */
  keyValues(rowKey: Buffer, out: unknown[]): number {
    out[0] = new Uint8Array(rowKey.buffer, rowKey.byteOffset, rowKey.length);
    return this.idValues(rowKey, out, 1);
  }

  /** The table's row key format (the id components' source). */
  get keyFormat(): RowKeyFormat {
    return this.layout.keyFormat;
  }

  /** The values of the id components of a row key into `out` from index `at`; the index after them. */
  idValues(rowKey: Buffer, out: unknown[], at: number): number {
    const ids = this.idColumns;
    if (ids.length === 0) return at;
    // A LONG component decodes as a bigint (row-key.ts longComponent), as its Arrow and Avro columns take it.
    const parts = componentsOrNone(this.layout.keyFormat, rowKey);
    for (let i = 0; i < ids.length; i++) out[at++] = parts[i] ?? null;
    return at;
  }

  /** The index in `columns` of group family `family`'s column `qualifier`; -1 when there is none (undeclared, or a map family). */
  columnIndexOf(family: string, qualifier: string): number {
    const slot = this.slots.get(family);
    const column = slot instanceof Map ? slot.get(qualifier) : undefined;
    return column === undefined ? -1 : column.at - 1 - this.idColumns.length;
  }

  /** The column value of a group family column's cell text (its reader's, an error naming the column where it cannot be read). */
  static valueOf(column: DataColumn, json: string): unknown {
    return readOrThrow(column.decode, json, column.name);
  }

  /** A cell into a column's list of versions, while it holds fewer than asked for. */
  private addVersion(list: unknown[], decode: Decode, cell: CellOut): void {
    if (list.length < this.versions) list.push({ timestamp: BigInt(cell.timestamp), value: decodeOrThrow(decode, cell) });
  }
}

function decodeOrThrow(decode: Decode, cell: CellOut): unknown {
  return readOrThrow(decode, cell.json, `${cell.family}:${cell.qualifier}`);
}

function readOrThrow(decode: Decode, json: string, column: string): unknown {
  try {
    return decode(json);
  } catch (e) {
    const why = e instanceof Error && 'describe' in e && typeof e.describe === 'function' ? (e.describe as () => string)() : (e as Error).message;
    throw rgError('RG_ERR_BAD_PARAMETER', `cannot send column ${column} as a typed column: ${why}`);
  }
}
