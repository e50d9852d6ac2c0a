/**
 * Exports as Avro: a record schema derived from a table's layout, and rows (their cells, as the
 * store reads them) turned into values of it.
 *
 * The row record (`rowgate_export_<table>`): `row_key` (bytes); `entity_id`, a record of the key
 * components (STRING string, INTEGER int, LONG long; nullable ones a union with null) for
 * FORMATTED keys that have them, otherwise absent, and null for a row whose key its format cannot
 * decode (the Arrow and Parquet columns are null then too; `row_key` still holds it); then one
 * field per family: a group family is a record with a field per column, a map family a map by
 * qualifier; each column holds an array of cells, newest first, `{timestamp: long, value: <the
 * column's schema>, writer_schema: long}`.
 * Values are typed by the column's INLINE schema (counters: long); columns whose schema the layout
 * does not carry inline (CLASS, AVRO by uid, RAW_BYTES, PROTOBUF) hold the value's Avro JSON text.
 */
import avro from 'avsc';
import { rgError } from '../../errors.js';
import { componentsOrNone } from '../keys/row-key.js';
import { avroFromJson } from './avro-json.js';
import { buildAvroType, type AvroType } from './avro-types.js';
import { EXPORT_LONG } from './export-long.js';
import { parseExactJson, stringifyExactJson } from '../json/exact-json.js';
import { plainNumberReader } from '../json/plain-number.js';
import { isPlainStringBytes, plainString } from '../json/plain-string.js';
import { storedSchemaText } from './cell-schema.js';
import type { CellSchemaSpec, JsonValue, RowOut, TableLayout } from '../types.js';

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
  /**
   * The slot of a group family's column in storedRowValue's cells (its index among the layout's
   * group family columns); -1 for a column the layout does not declare, -2 for a map family's
   * qualifier (such a row takes rowValue).
   */
  slotOf(family: string, qualifier: string): number;
  /** Slots storedRowValue reads. */
  readonly slots: number;
  /**
   * The value rowValue gives a row with at most one cell a column, given by slot: slot `c`'s value
   * is the JSON text `v[starts[c], ends[c])` (none where `starts[c]` is -1) at `stamps[c]`, written
   * by schema `schemaIds[c]`. The embedded store's scan threads read a row's cells so from its
   * stored bytes (lib/store/lmdb/stored-columns.ts), without a row or a cell object.
   */
  storedRowValue(rowKey: Buffer, v: Buffer, cells: CellsBySlot, withSchema?: boolean): unknown;
}

/** A row's cells by slot (AvroExport.storedRowValue). */
export interface CellsBySlot {
  readonly starts: Int32Array;
  readonly ends: Int32Array;
  readonly stamps: Float64Array;
  readonly schemaIds: Int32Array;
}

const NAME = /[^A-Za-z0-9_]/g;
const avroName = (s: string): string => {
  const n = s.replace(NAME, '_');
  return /^[A-Za-z_]/.test(n) ? n : `_${n}`;
};

/**
 * The value schema of a column: the schema its cells are stored in (cell-schema.ts: INLINE, an AVRO
 * default reader given inline, RAW_BYTES, counters), as the Arrow and Parquet columns are typed;
 * else its Avro JSON text as a string.
 */
function valueSchema(spec: CellSchemaSpec): { schema: Schema; typed: boolean } {
  const text = storedSchemaText(spec);
  return text === undefined ? { schema: 'string', typed: false } : { schema: parseExactJson(text, 'column schema'), typed: true };
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
  /** A typed column's value from its JSON text without the exact parser, or undefined where the general path is needed. */
  decode?: (json: string) => unknown;
  /** The same from the text's bytes where it is plain (no string made), or undefined. */
  decodeBytes?: (b: Buffer, start: number, end: number) => unknown;
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
      type: [
        'null',
        {
          type: 'record',
          name: 'entity_id',
          fields: components.map((c, i) => {
            const base = c.type === 'STRING' ? 'string' : c.type === 'INTEGER' ? 'int' : 'long';
            return { name: avroName(c.name), type: i >= format.nullableStartIndex ? ['null', base] : base };
          }),
        },
      ],
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
  const type = buildAvroType(schema, EXPORT_LONG);
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

  // Names and plans looked up once here, not per row (avroName's regex was 2.5% of an export).
  const idParts = components.map((c, i) => ({
    field: avroName(c.name),
    branch: c.type === 'STRING' ? 'string' : c.type === 'INTEGER' ? 'int' : 'long',
    nullable: format.encoding === 'FORMATTED' && i >= format.nullableStartIndex,
  }));
  // Families and columns by name, their keys made once: the per-row Maps of cells by family and
  // qualifier and a key string a column were ~10% of an export's time with their garbage.
  const families = layout.localityGroups.flatMap((g) =>
    g.families.map((family) => {
      const map = family.mapSchema !== undefined ? { plan: plans.get(`${family.name}:`)!, key: `${family.name}:` } : undefined;
      const columns = family.columns.map((c) => ({
        field: avroName(c.name),
        plan: plans.get(`${family.name}:${c.name}`)!,
        key: `${family.name}:${c.name}`,
      }));
      return { field: avroName(family.name), map, columns, byQualifier: new Map(family.columns.map((c, i) => [c.name, columns[i]!])) };
    }),
  );
  const familyIndex = new Map(layout.localityGroups.flatMap((g) => g.families).map((f, i) => [f.name, families[i]!]));
  for (const plan of plans.values()) {
    plan.decode = plan.typed ? fastDecoder(plan.valueType!) : undefined;
    plan.decodeBytes = plan.typed ? bytesDecoder(plan.valueType!) : undefined;
  }
  // The group family columns in layout order: storedRowValue's slots.
  const slotted = families.flatMap((family) => family.columns.map((column) => ({ family, column })));
  const slotIndex = new Map(slotted.map(({ column }, i) => [column.key, i]));
  /** A column without cells: shared, since avsc only reads it. */
  const NONE: readonly unknown[] = Object.freeze([]);
  /** A row's value with its key's fields and every family empty. */
  const emptyValue = (rowKey: Buffer): Record<string, unknown> => {
    const value: Record<string, unknown> = { row_key: rowKey };
    if (idParts.length > 0) {
      // No components: the key is not of its format (a FORMATTED key always decodes to all of them).
      const parts = componentsOrNone(format, rowKey);
      if (parts.length === 0) value.entity_id = null;
      else {
        const id: Record<string, unknown> = {};
        for (let i = 0; i < idParts.length; i++) {
          const { field, branch, nullable } = idParts[i]!;
          const v = parts[i] ?? null;
          id[field] = nullable ? (v === null ? null : { [branch]: v }) : v;
        }
        value.entity_id = { entity_id: id };
      }
    }
    for (const family of families) {
      // No prototype: a qualifier named __proto__ is a key like any other.
      if (family.map !== undefined) value[family.field] = Object.create(null);
      else {
        const rec: Record<string, unknown> = {};
        for (const c of family.columns) rec[c.field] = NONE;
        value[family.field] = rec;
      }
    }
    return value;
  };
  const rowValue = (row: RowOut, withSchema = true): unknown => {
    const value = emptyValue(row.rowKey);
    // The cells in stored order (family, qualifier, newest first) appended to their column's list;
    // cells of families or columns the layout does not name are left out.
    for (const cell of row.cells) {
      const family = familyIndex.get(cell.family);
      if (family === undefined) continue;
      const holder = value[family.field] as Record<string, unknown[]>;
      let column: { field: string; plan: ColumnPlan; key: string } | undefined;
      if (family.map !== undefined) column = { field: cell.qualifier, plan: family.map.plan, key: family.map.key };
      else if ((column = family.byQualifier.get(cell.qualifier)) === undefined) continue;
      let list = holder[column.field];
      if (list === undefined || list === NONE) holder[column.field] = list = [];
      list.push({
        // Numbers where they are safe: the export's long type takes both (EXPORT_LONG).
        timestamp: cell.timestamp,
        value: columnValue(column.plan, cell.json, column.key),
        writer_schema: withSchema ? cell.schemaId : -1,
      });
    }
    return value;
  };
  const storedRowValue = (rowKey: Buffer, v: Buffer, cells: CellsBySlot, withSchema = true): unknown => {
    const value = emptyValue(rowKey);
    const { starts, ends, stamps, schemaIds } = cells;
    for (let i = 0; i < slotted.length; i++) {
      const start = starts[i]!;
      if (start < 0) continue;
      const { family, column } = slotted[i]!;
      const end = ends[i]!;
      const { plan } = column;
      const fast = plan.decodeBytes?.(v, start, end);
      (value[family.field] as Record<string, unknown[]>)[column.field] = [
        {
          timestamp: stamps[i]!,
          value: fast !== undefined ? fast : columnValue(plan, v.toString('utf8', start, end), column.key),
          writer_schema: withSchema ? schemaIds[i]! : -1,
        },
      ];
    }
    return value;
  };
  const slotOf = (family: string, qualifier: string): number =>
    familyIndex.get(family)?.map !== undefined ? -2 : (slotIndex.get(`${family}:${qualifier}`) ?? -1);
  return { type, schema, rowValue, slotOf, slots: slotted.length, storedRowValue };
}

/** A long written as JSON that fits a double exactly (15 digits: below 2^53). */
const SAFE_LONG_TEXT = /^-?(?:0|[1-9][0-9]{0,14})$/;

/**
 * Decoders for the primitive schemas, from the cell's JSON text with the native parser (the
 * exact parser was 7% of an export; its work is only needed for longs beyond 2^53, unions,
 * records, bytes). undefined from a decoder sends the value to the general path, which also
 * names a value that does not match.
 */
function fastDecoder(type: AvroType): ((json: string) => unknown) | undefined {
  switch (type.typeName) {
    case 'string':
      return (json) => {
        const plain = plainString(json);
        if (plain !== undefined) return plain;
        const v: unknown = JSON.parse(json);
        return typeof v === 'string' ? v : undefined;
      };
    case 'boolean':
      return (json) => (json === 'true' ? true : json === 'false' ? false : undefined);
    case 'int':
      return (json) => {
        const v = Number(json);
        return (v | 0) === v ? v : undefined;
      };
    case 'double':
    case 'float': {
      const round = type.typeName === 'float' ? Math.fround : (n: number) => n;
      // Number() reads any JSON number as JSON.parse does, and gives NaN for JSON of another type.
      return (json) => {
        const v = Number(json);
        return Number.isFinite(v) ? round(v) : undefined;
      };
    }
    case 'abstract:long':
    case 'long':
      return (json) => (SAFE_LONG_TEXT.test(json) ? Number(json) : undefined);
    default:
      return undefined;
  }
}

/**
 * fastDecoder's readers from the JSON text's bytes where it is plain (json/plain-number.ts,
 * isPlainStringBytes); undefined sends the value to the reader of its text.
 */
function bytesDecoder(type: AvroType): ((b: Buffer, start: number, end: number) => unknown) | undefined {
  switch (type.typeName) {
    case 'string':
      return (b, start, end) => (isPlainStringBytes(b, start, end) ? b.toString('utf8', start + 1, end - 1) : undefined);
    case 'boolean':
      return (b, start, end) => (end - start === 4 && b[start] === 0x74 ? true : end - start === 5 && b[start] === 0x66 ? false : undefined);
  }
  const read = plainNumberReader(type.typeName === 'abstract:long' ? 'long' : type.typeName);
  if (read === undefined) return undefined;
  // The float's double rounded as fastDecoder rounds it.
  const round = type.typeName === 'float' ? Math.fround : (n: number) => n;
  return (b, start, end) => {
    const n = read(b, start, end);
    return n === n ? round(n) : undefined;
  };
}

/** A cell's value from its JSON text: typed by the column's schema, or the text itself. */
function columnValue(plan: ColumnPlan, json: string, column: string): unknown {
  return plan.typed ? decodeCell(plan, json, column) : json;
}

function decodeCell(plan: ColumnPlan, json: string, column: string): unknown {
  if (plan.decode !== undefined) {
    try {
      const v = plan.decode(json);
      if (v !== undefined) return v;
    } catch {
      // Not JSON the native parser reads: the general path names what is wrong.
    }
  }
  return cellValue(plan.valueType!, parseExactJson(json, 'value'), column);
}

function cellValue(type: AvroType, json: JsonValue, column: string): unknown {
  try {
    return avroFromJson(type, json, true);
  } catch (e) {
    throw rgError('RG_ERR_BAD_PARAMETER', `cannot export column ${column} as Avro: a value does not match the layout's schema (${(e as Error).message})`);
  }
}
