/**
 * A table's rows as Arrow columns, typed from the layout (issue #30 item 2), for the Arrow IPC
 * stream (stages/arrow.ts): `row_key` (binary), the entity id's components for FORMATTED keys
 * (STRING utf8, INTEGER int32, LONG int64; null where a nullable component is absent), then one
 * column a family column named `family:qualifier` and one a map family named `family`.
 *
 * A column's type is its INLINE Avro schema's: string utf8, long int64, int int32, double float64,
 * float float32, boolean bool, bytes binary; counters int64. Any other schema (records, arrays,
 * maps, unions, enums, fixed; CLASS, AVRO by uid, RAW_BYTES, PROTOBUF) is the value's Avro JSON text
 * as utf8. With one version (the default) a column holds the newest value, null when the row has
 * no cell there; with more, a list of {timestamp: int64, value} newest first. A map family is a
 * map from qualifier to that. All encoding is apache-arrow's (its builders and IPC writer).
 */
import { Binary, Bool, Field, Float32, Float64, Int32, Int64, List, makeBuilder, Map_, RecordBatch, Struct, Table, Utf8, type DataType } from 'apache-arrow';
import { rgError } from '../../errors.js';
import { parseExactJson } from '../../model/json/exact-json.js';
import { decodeRowKey } from '../../model/keys/row-key.js';
import type { CellOut, CellSchemaSpec, ComponentValue, RowOut, TableLayout } from '../../model/types.js';

type Decode = (json: string) => unknown;

interface ValueKind {
  readonly type: DataType;
  readonly decode: Decode;
}

const BIGINT_TEXT = /^-?[0-9]+$/;

/** A primitive Avro type's Arrow type and reader of its JSON text; undefined for any other schema. */
function primitiveKind(schema: unknown): ValueKind | undefined {
  const name =
    typeof schema === 'string'
      ? schema
      : typeof schema === 'object' && schema !== null && !Array.isArray(schema)
        ? (schema as { type?: unknown }).type
        : undefined;
  const parsed = (json: string): unknown => parseExactJson(json, 'value');
  switch (name) {
    case 'string':
      return { type: new Utf8(), decode: (j) => String(JSON.parse(j)) };
    case 'long':
      return { type: new Int64(), decode: (j) => (BIGINT_TEXT.test(j) ? BigInt(j) : BigInt(parsed(j) as number)) };
    case 'int':
      return { type: new Int32(), decode: (j) => Number(j) };
    case 'double':
      return { type: new Float64(), decode: (j) => Number(parsed(j)) };
    case 'float':
      return { type: new Float32(), decode: (j) => Number(parsed(j)) };
    case 'boolean':
      return { type: new Bool(), decode: (j) => j === 'true' };
    case 'bytes':
      // Avro JSON writes bytes as a string of code points 0-255.
      return { type: new Binary(), decode: (j) => new Uint8Array(Buffer.from(String(JSON.parse(j)), 'latin1')) };
    default:
      return undefined;
  }
}

const JSON_TEXT: ValueKind = { type: new Utf8(), decode: (j) => j };

/** How a column's cells become values: its schema's kind, or JSON text. */
export function valueKindOf(spec: CellSchemaSpec): ValueKind {
  if (spec.type === 'COUNTER') return { type: new Int64(), decode: (j) => BigInt(j) };
  if (spec.type === 'INLINE' && spec.value !== undefined) return primitiveKind(parseExactJson(spec.value, 'column schema')) ?? JSON_TEXT;
  return JSON_TEXT;
}

interface Column {
  readonly name: string;
  readonly type: DataType;
  /** The column's value in a row, from the row's cells of it (newest first); null for none. */
  value(cells: readonly CellOut[] | undefined, qualifiers?: Map<string, CellOut[]>): unknown;
}

/** The column plan of a layout at a number of versions (1: newest value; more: lists). */
export class ArrowColumns {
  private readonly columns: Column[] = [];
  private readonly idColumns: { name: string; type: DataType; index: number }[] = [];
  private readonly families: { name: string; map: boolean; qualifiers: string[] }[] = [];

  constructor(
    private readonly layout: TableLayout,
    versions: number,
  ) {
    const format = layout.keyFormat;
    if (format.encoding === 'FORMATTED' && !format.suppressMaterialization)
      format.components.forEach((c, index) =>
        this.idColumns.push({ name: c.name, type: c.type === 'STRING' ? new Utf8() : c.type === 'INTEGER' ? new Int32() : new Int64(), index }),
      );
    const cellsOf = (kind: ValueKind): { type: DataType; value: (cells: readonly CellOut[] | undefined) => unknown } => {
      if (versions <= 1) return { type: kind.type, value: (cells) => (cells === undefined || cells.length === 0 ? null : decodeOrThrow(kind, cells[0]!)) };
      const struct = new Struct([new Field('timestamp', new Int64(), false), new Field('value', kind.type, true)]);
      return {
        type: new List(new Field('item', struct, false)),
        value: (cells) => (cells === undefined ? [] : cells.slice(0, versions).map((c) => ({ timestamp: BigInt(c.timestamp), value: decodeOrThrow(kind, c) }))),
      };
    };
    for (const group of layout.localityGroups)
      for (const family of group.families) {
        if (family.mapSchema !== undefined) {
          const inner = cellsOf(valueKindOf(family.mapSchema));
          this.families.push({ name: family.name, map: true, qualifiers: [] });
          this.columns.push({
            name: family.name,
            type: new Map_(new Field('entries', new Struct([new Field('key', new Utf8(), false), new Field('value', inner.type, true)] as never), false)),
            value: (_cells, qualifiers) => {
              const out = new Map<string, unknown>();
              for (const [q, list] of qualifiers ?? []) out.set(q, inner.value(list));
              return out;
            },
          });
        } else {
          this.families.push({ name: family.name, map: false, qualifiers: family.columns.map((c) => c.name) });
          for (const c of family.columns) {
            const plan = cellsOf(valueKindOf(c.schema));
            this.columns.push({ name: `${family.name}:${c.name}`, type: plan.type, value: plan.value });
          }
        }
      }
  }

  /** One record batch of `rows`. */
  batchOf(rows: readonly RowOut[]): RecordBatch {
    const names = ['row_key', ...this.idColumns.map((c) => c.name), ...this.columns.map((c) => c.name)];
    const types: DataType[] = [new Binary(), ...this.idColumns.map((c) => c.type), ...this.columns.map((c) => c.type)];
    const builders = types.map((type) => makeBuilder({ type, nullValues: [null, undefined] }));
    for (const row of rows) {
      let at = 0;
      builders[at++]!.append(new Uint8Array(row.rowKey.buffer, row.rowKey.byteOffset, row.rowKey.length));
      if (this.idColumns.length > 0) {
        const parts = componentsOf(this.layout, row.rowKey);
        for (const id of this.idColumns) {
          const v = parts[id.index] ?? null;
          builders[at++]!.append(v === null ? null : id.type instanceof Int64 ? BigInt(v as number | bigint) : v);
        }
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
      let column = 0;
      for (const family of this.families) {
        const got = byFamily.get(family.name);
        if (family.map) builders[at++]!.append(this.columns[column++]!.value(undefined, got));
        else for (const q of family.qualifiers) builders[at++]!.append(this.columns[column++]!.value(got?.get(q)));
      }
    }
    const vectors = Object.fromEntries(names.map((n, i) => [n, builders[i]!.finish().toVector()]));
    return new Table(vectors).batches[0]!;
  }
}

function componentsOf(layout: TableLayout, rowKey: Buffer): readonly ComponentValue[] {
  try {
    return decodeRowKey(layout.keyFormat, rowKey) ?? [];
  } catch {
    return [];
  }
}

function decodeOrThrow(kind: ValueKind, cell: CellOut): unknown {
  try {
    return kind.decode(cell.json);
  } catch (e) {
    throw rgError('RG_ERR_BAD_PARAMETER', `cannot send column ${cell.family}:${cell.qualifier} as Arrow: ${(e as Error).message}`);
  }
}
