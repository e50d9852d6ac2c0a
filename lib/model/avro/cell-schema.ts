/**
 * What the layout says about writing one column: its CellSchemaSpec, the schema values are
 * stored in (the column's reader schema) and, for STRICT Avro columns, the allowed writers.
 * Derived once per (schema table, spec) and cached: this runs for every posted cell.
 */

import { rgError } from '../../errors.js';
import type { AvroSchemaRef, CellSchemaSpec, SchemaTable, TableLayout } from '../types.js';
import { canonicalJsonOfType, canonicalSchemaJson } from './schema-table.js';
import { avroTypeOf } from './avro-types.js';

/** The schema spec of family:qualifier (map family: any qualifier), else RG_ERR_UNKNOWN_COLUMN. */
export function columnSpecOf(layout: TableLayout, family: string, qualifier: string): CellSchemaSpec {
  const fam = layout.families.get(family);
  const spec = fam?.mapSchema ?? fam?.columns.find((c) => c.name === qualifier)?.schema;
  if (spec === undefined) throw rgError('RG_ERR_UNKNOWN_COLUMN', `Specified column does not exist: ${family}:${qualifier}`);
  return spec;
}

/** How a column is written, derived once per (schema table, spec). */
export interface ColumnPlan {
  /**
   * The canonical schema values are stored and served in: INLINE its value, AVRO its default
   * reader, RAW_BYTES "bytes". undefined (values stay in their writer schema) for CLASS (the class
   * is unknown here) and AVRO without a default reader.
   */
  readonly reader?: string;
  /**
   * STRICT AVRO columns: the writer schemas accepted (unions flattened: each branch goes too).
   * undefined = any writer: other policies (DEVELOPER cannot update layouts here, so it counts as
   * NONE), other cell types, and STRICT columns with an empty `writers` list.
   */
  readonly allowedWriters?: ReadonlySet<string>;
}

// Per schema table, since `uid` references are ids of one instance's table.
const plans = new WeakMap<SchemaTable, WeakMap<CellSchemaSpec, ColumnPlan>>();

/** The cached plan, without waiting; undefined when not built yet. */
export function cachedColumnPlan(spec: CellSchemaSpec, schemas: SchemaTable): ColumnPlan | undefined {
  return plans.get(schemas)?.get(spec);
}

export async function columnPlanOf(spec: CellSchemaSpec, schemas: SchemaTable, column: string): Promise<ColumnPlan> {
  const cached = cachedColumnPlan(spec, schemas);
  if (cached !== undefined) return cached;
  const plan: ColumnPlan = { reader: await readerOf(spec, schemas, column), allowedWriters: await allowedWritersOf(spec, schemas, column) };
  let bySpec = plans.get(schemas);
  if (bySpec === undefined) {
    bySpec = new WeakMap();
    plans.set(schemas, bySpec);
  }
  bySpec.set(spec, plan);
  return plan;
}

async function readerOf(spec: CellSchemaSpec, schemas: SchemaTable, column: string): Promise<string | undefined> {
  switch (spec.type) {
    case 'INLINE':
      if (spec.value === undefined) throw rgError('RG_ERR_BAD_LAYOUT', `column ${column} is INLINE but has no schema`);
      return layoutSchema(spec.value, column);
    case 'AVRO':
      return spec.defaultReader && resolveRef(spec.defaultReader, schemas, column);
    case 'RAW_BYTES':
      return '"bytes"';
    case 'CLASS':
      return undefined;
    default:
      throw rgError('RG_ERR_BAD_SCHEMA', `column ${column} has cell type ${spec.type}, which cannot be written through this gateway`);
  }
}

function layoutSchema(schema: string, column: string): string {
  try {
    return canonicalSchemaJson(schema);
  } catch (e) {
    throw rgError('RG_ERR_BAD_LAYOUT', `the layout schema of column ${column} is invalid: ${(e as Error).message}`);
  }
}

async function resolveRef(ref: AvroSchemaRef, schemas: SchemaTable, column: string): Promise<string> {
  if (ref.json !== undefined) return layoutSchema(ref.json, column);
  const json = ref.uid === undefined ? undefined : await schemas.schemaOf(ref.uid);
  if (json === undefined) throw rgError('RG_ERR_BAD_LAYOUT', `the layout of column ${column} names schema uid ${ref.uid}, which is not in the schema table`);
  return json;
}

async function allowedWritersOf(spec: CellSchemaSpec, schemas: SchemaTable, column: string): Promise<ReadonlySet<string> | undefined> {
  if (spec.type !== 'AVRO' || spec.avroValidationPolicy !== 'STRICT' || spec.writers.length === 0) return undefined;
  const allowed = new Set<string>();
  for (const ref of spec.writers) {
    const json = await resolveRef(ref, schemas, column);
    allowed.add(json);
    const type = avroTypeOf(json);
    if (type.typeName === 'union:wrapped') {
      for (const branch of (type as typeof type & { types: (typeof type)[] }).types) allowed.add(canonicalJsonOfType(branch));
    }
  }
  return allowed;
}

/**
 * The Avro schema JSON text a column's cells are stored in, read from the layout alone (the
 * exports' column types): INLINE its value, AVRO its default reader given inline, RAW_BYTES
 * "bytes", counters "long"; undefined where the layout does not hold it (CLASS, an AVRO reader by
 * uid, which needs the schema table: readerOf below).
 */
export function storedSchemaText(spec: CellSchemaSpec): string | undefined {
  switch (spec.type) {
    case 'COUNTER':
      return '"long"';
    case 'INLINE':
      return spec.value;
    case 'AVRO':
      return spec.defaultReader?.json;
    case 'RAW_BYTES':
      return '"bytes"';
    default:
      return undefined;
  }
}
