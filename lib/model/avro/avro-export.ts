/**
 * Exports as Avro: a record schema derived from a table's layout, and rows (their cells, as the
 * store reads them) turned into values of it.
 *
 * The row record (`rowgate_export_<table>`): `row_key` (bytes); `entity_id`, a record of the key
 * components (STRING string, INTEGER int, LONG long; nullable ones a union with null) for
 * FORMATTED keys that have them, otherwise absent; then one field per family: a group family is a
 * record with a field per column, a map family a map by qualifier; each column holds an array of
 * cells, newest first, `{timestamp: long, value: <the column's schema>, writer_schema: long}`.
 * Values are typed by the column's INLINE schema (counters: long); columns whose schema the layout
 * does not carry inline (CLASS, AVRO by uid, RAW_BYTES, PROTOBUF) hold the value's Avro JSON text.
 */
import { rgError } from '../../errors.js';
import { decodeRowKey } from '../keys/row-key.js';
import { avroFromJson } from './avro-json.js';
import { buildAvroType, type AvroType } from './avro-types.js';
import { parseExactJson, stringifyExactJson } from '../json/exact-json.js';
import type { CellOut, CellSchemaSpec, ComponentValue, JsonValue, RowOut, TableLayout } from '../types.js';

type Schema = JsonValue;

export interface AvroExport {
  /** The row record type (exact bigint longs, wrapped unions). */
  readonly type: AvroType;
  /** The schema as JSON (what the container file's header carries). */
  readonly schema: Schema;
  /**
   * The Avro value of one row from its cells (stored order: family, qualifier, newest first);
   * `withSchema` false (revision 1, whose cells carry no writer_schema) writes writer_schema -1.
   */
  rowValue(row: RowOut, withSchema?: boolean): unknown;
}

const NAME = /[^A-Za-z0-9_]/g;
const avroName = (s: string): string => {
  const n = s.replace(NAME, '_');
  return /^[A-Za-z_]/.test(n) ? n : `_${n}`;
};

/** The value schema of a column: its inline schema, long for counters, else JSON text. */
function valueSchema(spec: CellSchemaSpec): { schema: Schema; typed: boolean } {
  if (spec.type === 'COUNTER') return { schema: 'long', typed: true };
  if (spec.type === 'INLINE' && spec.value !== undefined) return { schema: parseExactJson(spec.value, 'column schema'), typed: true };
  return { schema: 'string', typed: false };
}

/**
 * Named types may be defined once per schema: a later definition equal to an earlier one becomes
 * a reference by name; a different one with the same name cannot be exported (a clear error).
 */
function dedupeNames(schema: Schema, seen: Map<string, string>): Schema {
  if (Array.isArray(schema)) return schema.map((s) => dedupeNames(s, seen));
  if (schema === null || typeof schema !== 'object') return schema;
  const o = schema as Record<string, JsonValue>;
  if ((o.type === 'record' || o.type === 'enum' || o.type === 'fixed' || o.type === 'error') && typeof o.name === 'string') {
    const full = typeof o.namespace === 'string' && !o.name.includes('.') ? `${o.namespace}.${o.name}` : o.name;
    const text = stringifyExactJson(o);
    const earlier = seen.get(full);
    if (earlier === text) return full;
    if (earlier !== undefined) throw rgError('RG_ERR_BAD_PARAMETER', `cannot export as Avro: two different schemas named ${full}`);
    seen.set(full, text);
  }
  const out: Record<string, JsonValue> = {};
  for (const [k, v] of Object.entries(o))
    out[k] =
      k === 'fields' && Array.isArray(v)
        ? v.map((f) => ({ ...(f as Record<string, JsonValue>), type: dedupeNames((f as Record<string, JsonValue>).type ?? null, seen) }))
        : k === 'items' || k === 'values'
          ? dedupeNames(v, seen)
          : v;
  return out;
}

interface ColumnPlan {
  readonly typed: boolean;
  valueType?: AvroType;
}

/**
 * Made once per layout (a table's layout object lives until the table changes): building it took
 * 220-300 us for the bench's 5-column table, ten times a point read's whole answer, and each
 * Avro request built it again. The export holds no per-request state.
 */
const exportsByLayout = new WeakMap<TableLayout, AvroExport>();

export function avroExportOf(layout: TableLayout): AvroExport {
  let made = exportsByLayout.get(layout);
  if (made === undefined) {
    made = buildAvroExport(layout);
    exportsByLayout.set(layout, made);
  }
  return made;
}

function buildAvroExport(layout: TableLayout): AvroExport {
  const seen = new Map<string, string>();
  const plans = new Map<string, ColumnPlan>();
  const cellRecord = (name: string, spec: CellSchemaSpec, key: string): Schema => {
    const { schema, typed } = valueSchema(spec);
    plans.set(key, { typed });
    return {
      type: 'record',
      name,
      fields: [
        { name: 'timestamp', type: 'long' },
        { name: 'value', type: dedupeNames(schema, seen) },
        { name: 'writer_schema', type: 'long' },
      ],
    };
  };
  const fields: Schema[] = [{ name: 'row_key', type: 'bytes' }];
  const format = layout.keyFormat;
  const components = format.encoding === 'FORMATTED' && !format.suppressMaterialization ? format.components : [];
  if (components.length > 0 && format.encoding === 'FORMATTED') {
    fields.push({
      name: 'entity_id',
      type: {
        type: 'record',
        name: 'entity_id',
        fields: components.map((c, i) => {
          const base = c.type === 'STRING' ? 'string' : c.type === 'INTEGER' ? 'int' : 'long';
          return { name: avroName(c.name), type: i >= format.nullableStartIndex ? ['null', base] : base };
        }),
      },
    });
  }
  for (const group of layout.localityGroups) {
    for (const family of group.families) {
      const fam = avroName(family.name);
      if (family.mapSchema !== undefined) {
        fields.push({ name: fam, type: { type: 'map', values: { type: 'array', items: cellRecord(`${fam}_cell`, family.mapSchema, `${family.name}:`) } } });
      } else {
        fields.push({
          name: fam,
          type: {
            type: 'record',
            name: `${fam}_family`,
            fields: family.columns.map((c) => ({
              name: avroName(c.name),
              type: { type: 'array', items: cellRecord(`${fam}_${avroName(c.name)}_cell`, c.schema, `${family.name}:${c.name}`) },
            })),
          },
        });
      }
    }
  }
  const schema: Schema = { type: 'record', name: `rowgate_export_${avroName(layout.name)}`, fields };
  const type = buildAvroType(schema);
  // The value types inside the row type, to read each cell's JSON into.
  const record = type as unknown as { getField(name: string): { getType(): AvroType } };
  for (const group of layout.localityGroups) {
    for (const family of group.families) {
      const famType = record.getField(avroName(family.name)).getType() as unknown as {
        getValuesType?(): AvroType;
        getField?(n: string): { getType(): AvroType };
      };
      const cellOf = (arrayType: AvroType): AvroType =>
        ((arrayType as unknown as { getItemsType(): AvroType }).getItemsType() as unknown as { getField(n: string): { getType(): AvroType } })
          .getField('value')
          .getType();
      if (family.mapSchema !== undefined) plans.get(`${family.name}:`)!.valueType = cellOf(famType.getValuesType!());
      else for (const c of family.columns) plans.get(`${family.name}:${c.name}`)!.valueType = cellOf(famType.getField!(avroName(c.name)).getType());
    }
  }

  /** The row key's components, or none for a key its format cannot decode (named by bytes, as RAW keys are). */
  const componentsOf = (rowKey: Buffer): readonly ComponentValue[] => {
    try {
      return decodeRowKey(format, rowKey) ?? [];
    } catch {
      return [];
    }
  };
  const rowValue = (row: RowOut, withSchema = true): unknown => {
    const value: Record<string, unknown> = { row_key: row.rowKey };
    if (components.length > 0) {
      const parts = componentsOf(row.rowKey);
      const id: Record<string, unknown> = {};
      components.forEach((c, i) => {
        const v = parts[i] ?? null;
        const typed = c.type === 'LONG' && v !== null ? BigInt(v as number | bigint) : v;
        const base = c.type === 'STRING' ? 'string' : c.type === 'INTEGER' ? 'int' : 'long';
        id[avroName(c.name)] = format.encoding === 'FORMATTED' && i >= format.nullableStartIndex ? (typed === null ? null : { [base]: typed }) : typed;
      });
      value.entity_id = id;
    }
    // The row's cells by family, then qualifier, in stored order.
    const byFamily = new Map<string, Map<string, CellOut[]>>();
    for (const cell of row.cells) {
      let family = byFamily.get(cell.family);
      if (family === undefined) byFamily.set(cell.family, (family = new Map()));
      const list = family.get(cell.qualifier);
      if (list === undefined) family.set(cell.qualifier, [cell]);
      else list.push(cell);
    }
    const cells = (key: string, list: readonly CellOut[]) => {
      const plan = plans.get(key)!;
      return list.map((cell) => ({
        timestamp: BigInt(cell.timestamp),
        value: plan.typed ? cellValue(plan.valueType!, parseExactJson(cell.json, 'value'), key) : cell.json,
        writer_schema: withSchema ? BigInt(cell.schemaId) : -1n,
      }));
    };
    for (const group of layout.localityGroups) {
      for (const family of group.families) {
        const got = byFamily.get(family.name);
        if (family.mapSchema !== undefined) {
          const map: Record<string, unknown> = {};
          for (const [q, list] of got ?? []) map[q] = cells(`${family.name}:`, list);
          value[avroName(family.name)] = map;
        } else {
          const rec: Record<string, unknown> = {};
          for (const c of family.columns) rec[avroName(c.name)] = cells(`${family.name}:${c.name}`, got?.get(c.name) ?? []);
          value[avroName(family.name)] = rec;
        }
      }
    }
    return value;
  };
  return { type, schema, rowValue };
}

function cellValue(type: AvroType, json: JsonValue, column: string): unknown {
  try {
    return avroFromJson(type, json, true);
  } catch (e) {
    throw rgError('RG_ERR_BAD_PARAMETER', `cannot export column ${column} as Avro: a value does not match the layout's schema (${(e as Error).message})`);
  }
}
