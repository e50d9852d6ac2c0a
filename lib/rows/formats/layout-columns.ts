/**
 * A table's rows as typed columns, from the layout (issue #30): the one column plan the columnar
 * formats share, so the Arrow IPC stream (arrow-columns.ts) and Parquet (parquet-columns.ts) name,
 * type and fill their columns alike; each only maps the value types below to its own.
 *
 * Columns: `row_key` (bytes), the entity id's components for FORMATTED keys (STRING string, INTEGER
 * int, LONG long; null where a nullable component is absent), then one column a family column named
 * `family:qualifier` and one a map family named `family`. A column's value type is its INLINE Avro
 * schema's: string, long, int, double, float, boolean, bytes; counters long. Any other schema
 * (records, arrays, maps, unions, enums, fixed; CLASS, AVRO by uid, RAW_BYTES, PROTOBUF) is `json`:
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
const exact = (json: string): unknown => parseExactJson(json, 'value');

/** Readers of a value's JSON text (the stored cell's) into the JavaScript value of its type. */
const DECODE: Readonly<Record<ValueType, Decode>> = {
  string: (j) => String(JSON.parse(j)),
  long: (j) => (BIGINT_TEXT.test(j) ? BigInt(j) : BigInt(exact(j) as number)),
  int: (j) => Number(j),
  double: (j) => Number(exact(j)),
  float: (j) => Number(exact(j)),
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

/** A column's value type from its cell schema. */
export function valueTypeOf(spec: CellSchemaSpec): ValueType {
  if (spec.type === 'COUNTER') return 'long';
  if (spec.type === 'INLINE' && spec.value !== undefined) return primitiveType(parseExactJson(spec.value, 'column schema'));
  return 'json';
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
  private readonly families: { name: string; map: boolean; qualifiers: string[]; decode: Decode[] }[] = [];
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
    for (const group of layout.localityGroups)
      for (const family of group.families) {
        if (family.mapSchema !== undefined) {
          const valueType = valueTypeOf(family.mapSchema);
          this.families.push({ name: family.name, map: true, qualifiers: [], decode: [DECODE[valueType]] });
          columns.push({ name: family.name, valueType, map: true, listed: this.listed });
        } else {
          const types = family.columns.map((c) => valueTypeOf(c.schema));
          this.families.push({ name: family.name, map: false, qualifiers: family.columns.map((c) => c.name), decode: types.map((t) => DECODE[t]) });
          family.columns.forEach((c, i) => columns.push({ name: `${family.name}:${c.name}`, valueType: types[i]!, map: false, listed: this.listed }));
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
    // The row's cells by family, then qualifier, newest first as stored.
    const byFamily = new Map<string, Map<string, CellOut[]>>();
    for (const cell of row.cells) {
      let family = byFamily.get(cell.family);
      if (family === undefined) byFamily.set(cell.family, (family = new Map()));
      const list = family.get(cell.qualifier);
      if (list === undefined) family.set(cell.qualifier, [cell]);
      else list.push(cell);
    }
    for (const family of this.families) {
      const got = byFamily.get(family.name);
      if (family.map) {
        const map = new Map<string, unknown>();
        for (const [q, list] of got ?? []) map.set(q, this.cellsValue(family.decode[0]!, list));
        out[at++] = map;
      } else family.qualifiers.forEach((q, i) => (out[at++] = this.cellsValue(family.decode[i]!, got?.get(q))));
    }
  }

  /** A column's value from its cells (newest first): the newest value, or the list of versions. */
  private cellsValue(decode: Decode, cells: readonly CellOut[] | undefined): unknown {
    if (!this.listed) return cells === undefined || cells.length === 0 ? null : decodeOrThrow(decode, cells[0]!);
    return cells === undefined ? [] : cells.slice(0, this.versions).map((c) => ({ timestamp: BigInt(c.timestamp), value: decodeOrThrow(decode, c) }));
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
