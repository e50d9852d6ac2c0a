/**
 * Small TableLayout objects built by hand, so model tests do not depend on the layout parser.
 */

import type { CellSchemaSpec, ColumnLayout, FamilyLayout, TableLayout } from '../../../lib/model/types.js';
import { FOREVER } from '../../../lib/model/types.js';

const base = { storage: 'UID', avroValidationPolicy: 'SCHEMA_1_0', readers: [], writers: [] } as const;

/** An INLINE cell schema; `schema` is the schema JSON text (e.g. '"string"') or a parsed schema. */
export function inline(schema: unknown): CellSchemaSpec {
  return { ...base, type: 'INLINE', value: typeof schema === 'string' ? schema : JSON.stringify(schema) };
}

export function counter(): CellSchemaSpec {
  return { ...base, type: 'COUNTER' };
}

export function rawBytes(): CellSchemaSpec {
  return { ...base, type: 'RAW_BYTES' };
}

export function classSchema(className: string): CellSchemaSpec {
  return { ...base, type: 'CLASS', value: className };
}

export function avroSchema(spec: Partial<Pick<CellSchemaSpec, 'defaultReader' | 'readers' | 'writers' | 'avroValidationPolicy'>>): CellSchemaSpec {
  return { ...base, type: 'AVRO', ...spec };
}

/** family name -> { map: spec } for a map family, or { columns: { name: spec } } for a group family. */
export type FamilyDesc = { map: CellSchemaSpec } | { columns: Record<string, CellSchemaSpec> };

export function handLayout(name: string, families: Record<string, FamilyDesc>): TableLayout {
  const fams: FamilyLayout[] = Object.entries(families).map(([famName, desc], i) => {
    const columns: ColumnLayout[] = 'columns' in desc ? Object.entries(desc.columns).map(([colName, schema], j) => ({ id: j + 1, name: colName, schema })) : [];
    return {
      id: i + 1,
      name: famName,
      localityGroup: 'default',
      maxVersions: FOREVER,
      ttlSeconds: FOREVER,
      ...('map' in desc ? { mapSchema: desc.map } : {}),
      columns,
    };
  });
  return {
    name,
    desc: { name },
    keyFormat: { encoding: 'RAW' },
    localityGroups: [{ id: 1, name: 'default', inMemory: false, maxVersions: FOREVER, ttlSeconds: FOREVER, families: fams }],
    families: new Map(fams.map((f) => [f.name, f])),
  };
}
