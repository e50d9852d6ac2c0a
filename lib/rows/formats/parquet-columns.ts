/**
 * A table's rows as Parquet columns (issue #30 item 1), for the Parquet stage (stages/parquet.ts).
 * Which columns, column types and JavaScript values: layout-columns.ts, shared with Arrow; here only
 * the Parquet schema: string and json (Avro JSON text) BYTE_ARRAY UTF8, long INT64, int INT32,
 * double DOUBLE, float FLOAT, boolean BOOLEAN, bytes BYTE_ARRAY, fixed FIXED_LEN_BYTE_ARRAY of its
 * size, record a group of its fields, list a 3-level LIST (`list`, `element`), map a MAP from a UTF8
 * key; row_key a required BYTE_ARRAY; every other column and part OPTIONAL (null where absent).
 * Parquet has no union: a union is a group with one field a branch, named as Avro JSON names the
 * branch, the value's branch set and the others null, which is layout-columns.ts's union value
 * `{branch: value}` read as a struct (pyarrow and DuckDB read it as a struct; `col.int`).
 * versions > 1: a LIST of a struct {timestamp INT64, value} newest first; a map family: a MAP from
 * its UTF8 qualifier to the value or list. hyparquet-writer encodes everything (its Dremel levels
 * for the nested columns; 0.17.0 writes groups, LIST, MAP and FIXED_LEN_BYTE_ARRAY).
 */
import type { SchemaElement } from 'hyparquet';
import type { RowOut, TableLayout } from '../../model/types.js';
import { LayoutColumns, type ColumnType, type DataColumn, type IdType, type ValueType } from './layout-columns.js';

const UTF8 = { type: 'BYTE_ARRAY', converted_type: 'UTF8' } as const;
const LEAF: Readonly<Record<ValueType | IdType, Omit<SchemaElement, 'name'>>> = {
  string: UTF8,
  json: UTF8,
  long: { type: 'INT64' },
  int: { type: 'INT32' },
  double: { type: 'DOUBLE' },
  float: { type: 'FLOAT' },
  boolean: { type: 'BOOLEAN' },
  bytes: { type: 'BYTE_ARRAY' },
};

/** A value of `type` named `name`, OPTIONAL at every level: its schema elements, depth first (Parquet's flattened schema). */
function valueElements(name: string, type: ColumnType): SchemaElement[] {
  switch (type.kind) {
    case 'fixed':
      return [{ name, type: 'FIXED_LEN_BYTE_ARRAY', type_length: type.size, repetition_type: 'OPTIONAL' }];
    case 'record':
    case 'union': {
      const parts = type.kind === 'record' ? type.fields : type.branches;
      return [{ name, repetition_type: 'OPTIONAL', num_children: parts.length }, ...parts.flatMap((p) => valueElements(p.name, p.type))];
    }
    case 'list':
      return [
        { name, repetition_type: 'OPTIONAL', converted_type: 'LIST', num_children: 1 },
        { name: 'list', repetition_type: 'REPEATED', num_children: 1 },
        ...valueElements('element', type.items),
      ];
    case 'map':
      return mapElements(name, valueElements('value', type.values));
    default:
      return [{ name, ...LEAF[type.kind], repetition_type: 'OPTIONAL' } as SchemaElement];
  }
}

/** A MAP from a UTF8 key to `value` (the value's elements, named value). */
function mapElements(name: string, value: SchemaElement[]): SchemaElement[] {
  return [
    { name, repetition_type: 'OPTIONAL', converted_type: 'MAP', num_children: 1 },
    { name: 'key_value', repetition_type: 'REPEATED', num_children: 2 },
    { name: 'key', ...UTF8, repetition_type: 'REQUIRED' },
    ...value,
  ];
}

/** A data column's schema elements, depth first. */
function columnElements(column: DataColumn): SchemaElement[] {
  const value = (name: string): SchemaElement[] => {
    if (!column.listed) return valueElements(name, column.type);
    return [
      { name, repetition_type: 'OPTIONAL', converted_type: 'LIST', num_children: 1 },
      { name: 'list', repetition_type: 'REPEATED', num_children: 1 },
      { name: 'element', repetition_type: 'REQUIRED', num_children: 2 },
      { name: 'timestamp', type: 'INT64', repetition_type: 'REQUIRED' },
      ...valueElements('value', column.type),
    ];
  };
  return column.map ? mapElements(column.name, value('value')) : value(column.name);
}

/** The Parquet column plan of a layout at a number of versions (1: newest value; more: lists). */
export class ParquetColumns {
  private readonly plan: LayoutColumns;
  readonly names: readonly string[];
  readonly schema: SchemaElement[];

  constructor(layout: TableLayout, versions: number) {
    this.plan = new LayoutColumns(layout, versions);
    this.names = this.plan.names();
    this.schema = [
      { name: 'root', num_children: this.names.length },
      { name: 'row_key', type: 'BYTE_ARRAY', repetition_type: 'REQUIRED' },
      ...this.plan.idColumns.map((c) => ({ name: c.name, ...LEAF[c.type], repetition_type: 'OPTIONAL' }) as SchemaElement),
      ...this.plan.columns.flatMap(columnElements),
    ];
  }

  /** `rows` as one array of values a column, in names order. */
  columnsOf(rows: readonly RowOut[]): unknown[][] {
    const data = this.names.map(() => new Array<unknown>(rows.length));
    const values: unknown[] = new Array(this.names.length);
    rows.forEach((row, r) => {
      this.plan.rowValues(row, values);
      for (let c = 0; c < values.length; c++) data[c]![r] = values[c];
    });
    return data;
  }
}
