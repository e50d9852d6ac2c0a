/**
 * A table's rows as Arrow columns (issue #30 item 2), for the Arrow IPC stream (stages/arrow.ts).
 * Which columns and which JavaScript values: layout-columns.ts, shared with Parquet; here only the
 * value types' Arrow types: string utf8, long int64, int int32, double float64, float float32,
 * boolean bool, bytes binary, json (Avro JSON text) utf8; row_key binary; lists
 * list<struct<timestamp int64, value>>; map families map<utf8, value>. All encoding is apache-arrow's
 * (its builders and IPC writer).
 */
import { Binary, Bool, Field, Float32, Float64, Int32, Int64, List, makeBuilder, Map_, RecordBatch, Struct, Table, Utf8, type DataType } from 'apache-arrow';
import type { RowOut, TableLayout } from '../../model/types.js';
import { LayoutColumns, type DataColumn, type IdType, type ValueType } from './layout-columns.js';

function arrowValueType(type: ValueType): DataType {
  switch (type) {
    case 'long':
      return new Int64();
    case 'int':
      return new Int32();
    case 'double':
      return new Float64();
    case 'float':
      return new Float32();
    case 'boolean':
      return new Bool();
    case 'bytes':
      return new Binary();
    case 'string':
    case 'json':
      return new Utf8();
  }
}

const ID_TYPE: Readonly<Record<IdType, () => DataType>> = { string: () => new Utf8(), int: () => new Int32(), long: () => new Int64() };

function arrowColumnType(column: DataColumn): DataType {
  let type = arrowValueType(column.valueType);
  if (column.listed) type = new List(new Field('item', new Struct([new Field('timestamp', new Int64(), false), new Field('value', type, true)]), false));
  if (column.map) type = new Map_(new Field('entries', new Struct([new Field('key', new Utf8(), false), new Field('value', type, true)] as never), false));
  return type;
}

/** The Arrow column plan of a layout at a number of versions (1: newest value; more: lists). */
export class ArrowColumns {
  private readonly plan: LayoutColumns;
  private readonly names: string[];
  private readonly types: DataType[];

  constructor(layout: TableLayout, versions: number) {
    this.plan = new LayoutColumns(layout, versions);
    this.names = this.plan.names();
    this.types = [new Binary(), ...this.plan.idColumns.map((c) => ID_TYPE[c.type]()), ...this.plan.columns.map(arrowColumnType)];
  }

  /** One record batch of `rows`. */
  batchOf(rows: readonly RowOut[]): RecordBatch {
    const builders = this.types.map((type) => makeBuilder({ type, nullValues: [null, undefined] }));
    const values: unknown[] = new Array(builders.length);
    for (const row of rows) {
      this.plan.rowValues(row, values);
      for (let i = 0; i < builders.length; i++) builders[i]!.append(values[i]);
    }
    const vectors = Object.fromEntries(this.names.map((n, i) => [n, builders[i]!.finish().toVector()]));
    return new Table(vectors).batches[0]!;
  }
}
