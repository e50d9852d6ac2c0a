/**
 * A table's rows as Arrow columns (issue #30 item 2), for the Arrow IPC stream (stages/arrow.ts)
 * and the batches Parquet is written from (stages/parquet.ts). Which columns, column types and
 * JavaScript values: layout-columns.ts; here only their Arrow types: string and json (Avro JSON
 * text) utf8, long int64, int int32, double float64, float float32, boolean bool, bytes binary,
 * fixed fixed_size_binary, record struct, list list, map map<utf8, value>, union sparse_union of
 * its branches (for Parquet, which has no union, a struct of them: UnionForm; every field
 * nullable); row_key binary; versions lists list<struct<timestamp int64, value>>; map families
 * map<utf8, value>.
 *
 * Unions are sparse, not dense: DuckDB 1.5.6 refuses a dense union in an Arrow stream
 * ("Unsupported Internal Arrow Type: "d" Union") and reads a sparse one as its UNION type; pyarrow
 * reads both. All encoding is apache-arrow's (its builders and IPC writer); BranchUnionBuilder only
 * tells its sparse union builder which branch a value is. A table of flat columns only (strings,
 * bytes, numbers, booleans) has its batches filled in typed arrays instead (arrow-fill.ts, the same
 * bytes): the builders cost 3-4x as much a row.
 */
import type * as Arrow from 'apache-arrow';
import { arrow } from '../../deps/arrow.js';
import type { RowOut, TableLayout } from '../../model/types.js';
import { ArrowBatchFill } from './arrow-fill.js';
import { LayoutColumns, type ColumnType, type DataColumn, type IdType } from './layout-columns.js';

const {
  Binary,
  Bool,
  DataType,
  Field,
  FixedSizeBinary,
  Float32,
  Float64,
  Int32,
  Int64,
  List,
  makeBuilder,
  Map_,
  SparseUnion,
  SparseUnionBuilder,
  Struct,
  Table,
  Utf8,
} = arrow;

/**
 * How a union column is typed: Arrow's sparse union (the IPC stream), or a struct of its branches,
 * one set and the others null (for Parquet, which has no union: parquet-wasm writes the struct as
 * a group; pyarrow and DuckDB read it as a struct, `col.int`).
 */
export type UnionForm = 'union' | 'struct';

function arrowType(type: ColumnType, unions: UnionForm): Arrow.DataType {
  const inner = (t: ColumnType): Arrow.DataType => arrowType(t, unions);
  switch (type.kind) {
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
    case 'fixed':
      return new FixedSizeBinary(type.size);
    case 'record':
      return new Struct(type.fields.map((f) => new Field(f.name, inner(f.type), true)));
    case 'list':
      return new List(new Field('item', inner(type.items), true));
    case 'map':
      return mapOf(inner(type.values));
    case 'union': {
      const branches = type.branches.map((b) => new Field(b.name, inner(b.type), true));
      // A union value is {branch: value}: as a struct's value, the branch's field set, the others absent (null).
      if (unions === 'struct') return new Struct(branches);
      return new SparseUnion(
        type.branches.map((_, i) => i),
        branches,
      );
    }
  }
}

const mapOf = (value: Arrow.DataType): Arrow.DataType =>
  new Map_(new Field('entries', new Struct([new Field('key', new Utf8(), false), new Field('value', value, true)] as never), false));

const ID_TYPE: Readonly<Record<IdType, () => Arrow.DataType>> = { string: () => new Utf8(), int: () => new Int32(), long: () => new Int64() };

function arrowColumnType(column: DataColumn, unions: UnionForm): Arrow.DataType {
  let type = arrowType(column.type, unions);
  if (column.listed) type = new List(new Field('item', new Struct([new Field('timestamp', new Int64(), false), new Field('value', type, true)]), false));
  if (column.map) type = mapOf(type);
  return type;
}

const NULLS = [null, undefined];

/**
 * A sparse union builder fed layout-columns.ts's union values (`{branch: value}` or null): the
 * branch's child gets the value, every other child a null at the same index (a sparse union's
 * children are as long as the union), and a null is branch 0's null (a union has no validity
 * bitmap of its own).
 */
class BranchUnionBuilder extends SparseUnionBuilder<Arrow.SparseUnion> {
  private readonly branchOf: ReadonlyMap<string, number>;

  constructor(type: Arrow.SparseUnion) {
    super({ type, nullValues: NULLS });
    this.branchOf = new Map(type.children.map((f, i) => [f.name, i]));
  }

  override set(index: number, value: unknown): this {
    let branch = 0;
    let inner: unknown = null;
    if (value !== null && value !== undefined) {
      const [name, v] = Object.entries(value as Record<string, unknown>)[0]!;
      branch = this.branchOf.get(name)!;
      inner = v;
    }
    this.children.forEach((child, i) => {
      if (i !== branch) child.set(index, null);
    });
    // The union builder's public setValue: the type id, the branch's value, the length. (Its
    // buffer of type ids has another name in the bundled build: lib/deps/arrow.ts.)
    this.setValue(index, inner, this.type.typeIds[branch]!);
    return this;
  }

  /** A null parent (a struct) marks its children invalid: here, a null value. */
  override setValid(index: number, valid: boolean): boolean {
    if (!valid) this.set(index, null);
    return valid;
  }
}

/**
 * apache-arrow's builder of a column type of this plan: makeBuilder's, with a BranchUnionBuilder
 * wherever a union sits in it (makeBuilder's own union builder cannot tell a value's branch).
 */
function arrowBuilder(type: Arrow.DataType): Arrow.Builder {
  return hasUnion(type) ? builderOf(type) : makeBuilder({ type, nullValues: NULLS });
}

/** A builder of `type`, with BranchUnionBuilders wherever a union sits in it. */
function builderOf(type: Arrow.DataType): Arrow.Builder {
  if (DataType.isUnion(type)) {
    const union = new BranchUnionBuilder(type as Arrow.SparseUnion);
    for (const field of type.children) union.children.push(builderOf(field.type));
    return union;
  }
  const builder = makeBuilder({ type, nullValues: NULLS });
  (type.children ?? []).forEach((field: Arrow.Field, i: number) => {
    if (hasUnion(field.type)) builder.children[i] = builderOf(field.type);
  });
  return builder;
}

/** Whether a union sits anywhere in `type`. */
export function hasUnion(type: Arrow.DataType): boolean {
  return DataType.isUnion(type) || (type.children ?? []).some((f: Arrow.Field) => hasUnion(f.type));
}

/** The Arrow column plan of a layout at a number of versions (1: newest value; more: lists), its unions typed as `unions` says. */
export class ArrowColumns {
  /** The column plan the batches are made of (a scan thread's fill reads rows through it too). */
  readonly plan: LayoutColumns;
  /** Every batch's schema. */
  readonly schema: Arrow.Schema;
  /** Whether every column is flat, so batches are filled in typed arrays (ArrowBatchFill). */
  readonly flat: boolean;
  private readonly names: string[];
  private readonly types: Arrow.DataType[];

  constructor(layout: TableLayout, versions: number, unions: UnionForm = 'union') {
    this.plan = new LayoutColumns(layout, versions);
    this.names = this.plan.names();
    this.types = [new Binary(), ...this.plan.idColumns.map((c) => ID_TYPE[c.type]()), ...this.plan.columns.map((c) => arrowColumnType(c, unions))];
    this.schema = this.builtBatchOf([]).schema;
    this.flat = ArrowBatchFill.fills(this.schema);
  }

  /** One record batch of `rows`. */
  batchOf(rows: readonly RowOut[]): Arrow.RecordBatch {
    if (!this.flat) return this.builtBatchOf(rows);
    const fill = new ArrowBatchFill(this.plan, this.schema, rows.length);
    for (const row of rows) fill.add(row);
    return fill.take();
  }

  /** One record batch of `rows` by apache-arrow's builders: batchOf's for a table that is not flat, and the reference the fill is checked against. */
  builtBatchOf(rows: readonly RowOut[]): Arrow.RecordBatch {
    const builders = this.types.map(arrowBuilder);
    const values: unknown[] = new Array(builders.length);
    for (const row of rows) {
      this.plan.rowValues(row, values);
      for (let i = 0; i < builders.length; i++) builders[i]!.append(values[i]);
    }
    const vectors = Object.fromEntries(this.names.map((n, i) => [n, builders[i]!.finish().toVector()]));
    return new Table(vectors).batches[0]!;
  }
}
