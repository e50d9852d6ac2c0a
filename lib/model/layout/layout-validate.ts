/**
 * Validation of a decoded TableLayoutDesc for table creation (docs/data-model.md, "Layouts" and "Cell schemas"):
 * names, uniqueness, positive limits, version gates, family kinds and cell schemas.
 * Key format checks live in layout-keys.ts.
 */
import type { ElementRec, FamilyRec, LocalityGroupRec, TableLayoutDescRec } from './layout-avdl.js';
import { checkCellSchema } from './layout-cell.js';
import { badLayout } from './layout-error.js';
import { checkAlias, checkName, NameScope } from './layout-names.js';
import { requireVersion, type LayoutVersion } from './layout-version.js';

const GATE_1_2: readonly [number, number, number] = [1, 2, 0];

function positive(value: number | null, path: string): void {
  if (value !== null && value <= 0) throw badLayout(path, `must be greater than 0, got ${value}`);
}

/** Name, aliases (registered in `scope`) and the update-only fields of one LG, family or column. */
function checkElement(el: ElementRec, path: string, what: string, scope: NameScope): void {
  checkName(el.name, `${path}.name`, what);
  scope.add(el.name, `${path}.name`);
  el.aliases.forEach((alias, i) => {
    checkAlias(alias, `${path}.aliases[${i}]`);
    scope.add(alias, `${path}.aliases[${i}]`);
  });
  if (el.id < 0) throw badLayout(`${path}.id`, `must be >= 0 (0 = assign one), got ${el.id}`);
  // delete and renamed_from only make sense against a reference layout, which creation has not.
  if (el.delete) throw badLayout(`${path}.delete`, 'must be false when creating a table (delete applies to layout updates only)');
  if (el.renamed_from !== null) throw badLayout(`${path}.renamed_from`, 'must be null when creating a table (renames apply to layout updates only)');
}

function checkFamily(fam: FamilyRec, path: string, version: LayoutVersion): void {
  if (fam.map_schema !== null) {
    if (fam.columns.length > 0) {
      throw badLayout(`${path}.columns`, `family "${fam.name}" is a map-type family (map_schema is set) and cannot also declare columns`);
    }
    checkCellSchema(fam.map_schema, version, `${path}.map_schema`);
    return;
  }
  const columns = new NameScope('column');
  fam.columns.forEach((col, i) => {
    const p = `${path}.columns[${i}]`;
    checkElement(col, p, 'column', columns);
    checkCellSchema(col.column_schema, version, `${p}.column_schema`);
  });
}

function checkLocalityGroup(lg: LocalityGroupRec, path: string, version: LayoutVersion, lgs: NameScope, families: NameScope): void {
  checkElement(lg, path, 'locality group', lgs);
  positive(lg.max_versions, `${path}.max_versions`);
  positive(lg.ttl_seconds, `${path}.ttl_seconds`);
  if (lg.block_size !== null) requireVersion(version, GATE_1_2, `${path}.block_size`, 'block_size');
  positive(lg.block_size, `${path}.block_size`);
  if (lg.bloom_type !== null) requireVersion(version, GATE_1_2, `${path}.bloom_type`, 'bloom_type');
  lg.families.forEach((fam, i) => {
    const p = `${path}.families[${i}]`;
    checkElement(fam, p, 'family', families);
    checkFamily(fam, p, version);
  });
}

/** HBASE_NATIVE maps each family onto the HBase family of its locality group (4.2). */
function checkNativeTranslation(desc: TableLayoutDescRec): void {
  desc.locality_groups.forEach((lg, i) => {
    lg.families.forEach((fam, j) => {
      const p = `locality_groups[${i}].families[${j}]`;
      if (fam.map_schema !== null) throw badLayout(`${p}.map_schema`, 'column_name_translator HBASE_NATIVE allows only group-type families');
      if (fam.name !== lg.name) {
        throw badLayout(
          `${p}.name`,
          `column_name_translator HBASE_NATIVE needs every family to have the name of its locality group ("${lg.name}"), got "${fam.name}"`,
        );
      }
    });
  });
}

export function validateDesc(desc: TableLayoutDescRec, version: LayoutVersion): void {
  checkName(desc.name, 'name', 'table');
  if (desc.reference_layout !== null) {
    throw badLayout('reference_layout', `must be null when creating a table (layout updates are not supported), got "${desc.reference_layout}"`);
  }
  for (const field of ['max_filesize', 'memstore_flushsize'] as const) {
    if (desc[field] !== null) requireVersion(version, GATE_1_2, field, field);
    positive(desc[field], field);
  }
  if (desc.column_name_translator !== 'SHORT') {
    requireVersion(version, [1, 5, 0], 'column_name_translator', `column_name_translator ${desc.column_name_translator}`);
  }
  const lgs = new NameScope('locality group');
  const families = new NameScope('family'); // family names and aliases are unique across the table
  desc.locality_groups.forEach((lg, i) => checkLocalityGroup(lg, `locality_groups[${i}]`, version, lgs, families));
  if (desc.column_name_translator === 'HBASE_NATIVE') checkNativeTranslation(desc);
}
