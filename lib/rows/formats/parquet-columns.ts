/**
 * A table's rows as Parquet columns (issue #30 item 1), for the Parquet stage (stages/parquet.ts).
 * Which columns and which JavaScript values: layout-columns.ts, shared with Arrow; here only the
 * Parquet schema: string and json (Avro JSON text) BYTE_ARRAY UTF8, long INT64, int INT32, double
 * DOUBLE, float FLOAT, boolean BOOLEAN, bytes BYTE_ARRAY; row_key a required BYTE_ARRAY; every other
 * column OPTIONAL (null where the row has no cell). versions > 1: a LIST of a struct {timestamp
 * INT64, value} newest first; a map family: a MAP from its UTF8 qualifier to the value or list.
 * hyparquet-writer encodes everything (its Dremel levels for the nested columns).
 */
import type { SchemaElement } from 'hyparquet';
import type { RowOut, TableLayout } from '../../model/types.js';
import { LayoutColumns, type DataColumn, type IdType, type ValueType } from './layout-columns.js';

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

/** A data column's schema elements, depth first (Parquet's flattened schema). */
function columnElements(column: DataColumn): SchemaElement[] {
  const value = (name: string): SchemaElement[] => {
    const leaf = { name, ...LEAF[column.valueType], repetition_type: 'OPTIONAL' } as SchemaElement;
    if (!column.listed) return [leaf];
    return [
      { name, repetition_type: 'OPTIONAL', converted_type: 'LIST', num_children: 1 },
      { name: 'list', repetition_type: 'REPEATED', num_children: 1 },
      { name: 'element', repetition_type: 'REQUIRED', num_children: 2 },
      { name: 'timestamp', type: 'INT64', repetition_type: 'REQUIRED' },
      { ...leaf, name: 'value' },
    ];
  };
  if (!column.map) return value(column.name);
  return [
    { name: column.name, repetition_type: 'OPTIONAL', converted_type: 'MAP', num_children: 1 },
    { name: 'key_value', repetition_type: 'REPEATED', num_children: 2 },
    { name: 'key', ...UTF8, repetition_type: 'REQUIRED' },
    ...value('value'),
  ];
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
