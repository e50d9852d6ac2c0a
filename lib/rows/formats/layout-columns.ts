/**
 * A table's rows as typed columns, from the layout (issue #30): the one column plan the columnar
 * formats share, so the Arrow IPC stream (arrow-columns.ts) and Parquet (parquet-columns.ts) name,
 * type and fill their columns alike; each only maps the value types below to its own.
 *
 * Columns: `row_key` (bytes), the entity id's components for FORMATTED keys (STRING string, INTEGER
 * int, LONG long; null where a nullable component is absent), then one column a family column named
 * `family:qualifier` and one a map family named `family`. A column's value type is its INLINE Avro
 * schema's: string, long, int, double, float, boolean, bytes, or a union of null and one of those
 * (null where a cell holds null); counters long. Any other schema (records, arrays, maps, other
 * unions, enums, fixed; CLASS, AVRO by uid, RAW_BYTES, PROTOBUF) is `json`:
 * the value's Avro JSON text, exact (a long inside a record keeps all its digits). With one version
 * (the default) a column holds the newest value, null when the row has no cell there; with more, a
 * list of {timestamp, value} newest first. A map family is a map from qualifier to that.
 *
 * JavaScript values handed to the formats: string, bigint (long), number (int, double, float),
 * boolean, Uint8Array (bytes), string (json); lists are arrays of {timestamp: bigint, value}; maps
 * are Map<string, value>.
 */
import { rgError } from '../../errors.js';
import { parseExactJson } from '../../model/json/exact-json.js';
import { decodeRowKey } from '../../model/keys/row-key.js';
import type { CellOut, CellSchemaSpec, ComponentValue, RowOut, TableLayout } from '../../model/types.js';

export type ValueType = 'string' | 'long' | 'int' | 'double' | 'float' | 'boolean' | 'bytes' | 'json';
export type IdType = 'string' | 'int' | 'long';

type Decode = (json: string) => unknown;

const BIGINT_TEXT = /^-?[0-9]+$/;
/** A plain JSON number, which Number() reads as JSON does; anything else goes through the exact parser. */
const NUMBER_TEXT = /^-?(?:0|[1-9][0-9]*)(?:\.[0-9]+)?(?:[eE][+-]?[0-9]+)?$/;
const exact = (json: string): unknown => parseExactJson(json, 'value');

/** Readers of a value's JSON text (the stored cell's) into the JavaScript value of its type. */
const DECODE: Readonly<Record<ValueType, Decode>> = {
  string: (j) => String(JSON.parse(j)),
  long: (j) => (BIGINT_TEXT.test(j) ? BigInt(j) : BigInt(exact(j) as number)),
  int: (j) => Number(j),
  double: (j) => (NUMBER_TEXT.test(j) ? Number(j) : Number(exact(j))),
  float: (j) => (NUMBER_TEXT.test(j) ? Number(j) : Number(exact(j))),
  boolean: (j) => j === 'true',
  // Avro JSON writes bytes as a string of code points 0-255.
  bytes: (j) => new Uint8Array(Buffer.from(String(JSON.parse(j)), 'latin1')),
  json: (j) => j,
};

const PRIMITIVES = new Set<string>(['string', 'long', 'int', 'double', 'float', 'boolean', 'bytes']);

/** A primitive Avro schema's value type; json for any other schema. */
function primitiveType(schema: unknown): ValueType {
  const name =
    typeof schema === 'string'
      ? schema
      : typeof schema === 'object' && schema !== null && !Array.isArray(schema)
        ? (schema as { type?: unknown }).type
        : undefined;
  return typeof name === 'string' && PRIMITIVES.has(name) ? (name as ValueType) : 'json';
}

/**
 * A column's value type from its cell schema, and whether a cell may hold null: a union of null
 * and one primitive (`["null", "string"]`, the usual optional value) is that primitive's type, a
 * cell holding null a null there. As JSON text, such a null read as the text "null" in DuckDB and
 * pyarrow, which `IS NULL` misses (test/engines found it).
 */
export function valueTypeOf(spec: CellSchemaSpec): { readonly valueType: ValueType; readonly nullable: boolean } {
  if (spec.type === 'COUNTER') return { valueType: 'long', nullable: false };
  if (spec.type !== 'INLINE' || spec.value === undefined) return { valueType: 'json', nullable: false };
  const schema = parseExactJson(spec.value, 'column schema');
  if (Array.isArray(schema) && schema.length === 2) {
    const other = schema[0] === 'null' ? schema[1] : schema[1] === 'null' ? schema[0] : undefined;
    const valueType = other === undefined ? 'json' : primitiveType(other);
    if (valueType !== 'json') return { valueType, nullable: true };
  }
  return { valueType: primitiveType(schema), nullable: false };
}

/** The reader of a column's cells: the type's, with null for a nullable column's "null". */
function decoderOf(spec: CellSchemaSpec): { valueType: ValueType; decode: Decode } {
  const { valueType, nullable } = valueTypeOf(spec);
  const decode = DECODE[valueType];
  // A cell of a union is written bare (docs/interface.md, "Cells"): null, or the branch's value.
  return { valueType, decode: nullable ? (j) => (j === 'null' ? null : decode(j)) : decode };
}

/** One column after row_key and the id components. */
export interface DataColumn {
  readonly name: string;
  readonly valueType: ValueType;
  /** A map family: a map from qualifier to the value (or list). */
  readonly map: boolean;
  /** versions > 1: a list of {timestamp, value} newest first instead of the newest value. */
  readonly listed: boolean;
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
          const { valueType, decode } = decoderOf(family.mapSchema);
          this.slots.set(family.name, { map: first + columns.length, decode });
          this.mapSlots.push(first + columns.length);
          columns.push({ name: family.name, valueType, map: true, listed: this.listed });
        } else {
          const byQualifier = new Map<string, { at: number; decode: Decode }>();
          for (const c of family.columns) {
            const { valueType, decode } = decoderOf(c.schema);
            byQualifier.set(c.name, { at: first + columns.length, decode });
            columns.push({ name: `${family.name}:${c.name}`, valueType, map: false, listed: this.listed });
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
    let at = 0;
    out[at++] = new Uint8Array(row.rowKey.buffer, row.rowKey.byteOffset, row.rowKey.length);
    if (this.idColumns.length > 0) {
      const parts = componentsOf(this.layout, row.rowKey);
      this.idColumns.forEach((id, i) => {
        const v = parts[i] ?? null;
        out[at++] = v === null ? null : id.type === 'long' ? BigInt(v as number | bigint) : v;
      });
    }
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

  /** A cell into a column's list of versions, while it holds fewer than asked for. */
  private addVersion(list: unknown[], decode: Decode, cell: CellOut): void {
    if (list.length < this.versions) list.push({ timestamp: BigInt(cell.timestamp), value: decodeOrThrow(decode, cell) });
  }
}

function componentsOf(layout: TableLayout, rowKey: Buffer): readonly ComponentValue[] {
  try {
    return decodeRowKey(layout.keyFormat, rowKey) ?? [];
  } catch {
    return [];
  }
}

function decodeOrThrow(decode: Decode, cell: CellOut): unknown {
  try {
    return decode(cell.json);
  } catch (e) {
    throw rgError('RG_ERR_BAD_PARAMETER', `cannot send column ${cell.family}:${cell.qualifier} as a typed column: ${(e as Error).message}`);
  }
}
