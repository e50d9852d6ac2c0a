/** Builds the typed TableLayout from a validated, id-assigned, normalized TableLayoutDesc. */
import type { ColumnLayout, FamilyLayout, LocalityGroupLayout, RowKeyFormat, TableLayout } from '../types.js';
import { TableLayoutDesc, type LocalityGroupRec, type TableLayoutDescRec } from './layout-avdl.js';
import { encode } from './layout-avro-json.js';
import { toCellSpec } from './layout-cell.js';

function buildLocalityGroup(lg: LocalityGroupRec): LocalityGroupLayout {
  const families: FamilyLayout[] = lg.families.map((fam) => {
    const columns: ColumnLayout[] = fam.columns.map((col) => ({ id: col.id, name: col.name, schema: toCellSpec(col.column_schema) }));
    return {
      id: fam.id,
      name: fam.name,
      localityGroup: lg.name,
      maxVersions: lg.max_versions,
      ttlSeconds: lg.ttl_seconds,
      ...(fam.map_schema !== null ? { mapSchema: toCellSpec(fam.map_schema) } : {}),
      columns,
    };
  });
  return { id: lg.id, name: lg.name, inMemory: lg.in_memory, maxVersions: lg.max_versions, ttlSeconds: lg.ttl_seconds, families };
}

export function buildLayout(desc: TableLayoutDescRec, keyFormat: RowKeyFormat): TableLayout {
  const localityGroups = desc.locality_groups.map(buildLocalityGroup);
  const families = new Map<string, FamilyLayout>();
  for (const lg of localityGroups) for (const fam of lg.families) families.set(fam.name, fam);
  return {
    name: desc.name,
    desc: encode(desc, TableLayoutDesc) as Record<string, unknown>,
    keyFormat,
    localityGroups,
    families,
  };
}
