/**
 * Table layouts: parse a Kiji TableLayoutDesc (JSON text, lenient, or an object), validate it for
 * table creation, assign ids, and build the typed TableLayout whose `desc` is the normalized layout
 * in Avro JSON (what GET table serves; parseLayout(layout.desc) gives back an equal layout).
 */
import JSON5 from 'json5';
import type { CellSchemaSpec, ColumnLayout, FamilyLayout, TableLayout } from '../types.js';
import { TableLayoutDesc, type TableLayoutDescRec } from './layout-avdl.js';
import { decode } from './layout-avro-json.js';
import { buildLayout } from './layout-build.js';
import { normalizeCellSchema } from './layout-cell.js';
import { badLayout } from './layout-error.js';
import { assignIds } from './layout-ids.js';
import { compileKeysFormat } from './layout-keys.js';
import { validateDesc } from './layout-validate.js';
import { parseLayoutVersion } from './layout-version.js';

function readJson(text: string): unknown {
  try {
    // Kiji reads layouts with comments, single quotes and unquoted names allowed: JSON5 covers that.
    return JSON5.parse(text.replace(/^\uFEFF/, ''));
  } catch (e) {
    throw badLayout('', `is not valid JSON: ${(e as Error).message}`);
  }
}

function normalize(desc: TableLayoutDescRec): void {
  desc.layout_id ??= '1';
  for (const lg of desc.locality_groups) {
    for (const fam of lg.families) {
      if (fam.map_schema !== null) normalizeCellSchema(fam.map_schema);
      for (const col of fam.columns) normalizeCellSchema(col.column_schema);
    }
  }
}

/** Parses and validates a layout for a new table; throws RG_ERR_BAD_LAYOUT naming the bad field. */
export function parseLayout(input: string | object): TableLayout {
  const json = typeof input === 'string' ? readJson(input) : input;
  const desc = decode(json, TableLayoutDesc, '') as TableLayoutDescRec;
  const version = parseLayoutVersion(desc.version);
  desc.version = version.text;
  const keyFormat = compileKeysFormat(desc, version);
  validateDesc(desc, version);
  assignIds(desc);
  normalize(desc);
  return buildLayout(desc, keyFormat);
}

// ------------------------------------------------------------ lookups (names and aliases)

interface AliasIndex {
  readonly families: Map<string, FamilyLayout>;
  readonly columns: Map<FamilyLayout, Map<string, ColumnLayout>>;
}

const aliasIndexes = new WeakMap<TableLayout, AliasIndex>();

type DescElement = { name: string; aliases?: string[] };

/** Kiji resolves families and columns by name or alias; aliases live only in desc, so index them once. */
function aliasIndex(layout: TableLayout): AliasIndex {
  let index = aliasIndexes.get(layout);
  if (index !== undefined) return index;
  index = { families: new Map(), columns: new Map() };
  const lgs = (layout.desc.locality_groups ?? []) as { families?: (DescElement & { columns?: DescElement[] })[] }[];
  for (const fam of lgs.flatMap((lg) => lg.families ?? [])) {
    const family = layout.families.get(fam.name);
    if (family === undefined) continue;
    for (const alias of fam.aliases ?? []) index.families.set(alias, family);
    const byName = new Map(family.columns.map((c) => [c.name, c] as const));
    for (const col of fam.columns ?? []) {
      const column = byName.get(col.name);
      if (column !== undefined) for (const alias of col.aliases ?? []) byName.set(alias, column);
    }
    index.columns.set(family, byName);
  }
  aliasIndexes.set(layout, index);
  return index;
}

/** The family named `name` (primary name or alias), or undefined. */
export function familyOf(layout: TableLayout, name: string): FamilyLayout | undefined {
  return layout.families.get(name) ?? aliasIndex(layout).families.get(name);
}

/**
 * The cell schema of family:qualifier: a map family's schema for any qualifier, a group family's
 * declared column (by name or alias), else undefined.
 */
export function columnSchema(layout: TableLayout, family: string, qualifier: string): CellSchemaSpec | undefined {
  const fam = familyOf(layout, family);
  if (fam === undefined) return undefined;
  if (fam.mapSchema !== undefined) return fam.mapSchema;
  const direct = fam.columns.find((c) => c.name === qualifier);
  return (direct ?? aliasIndex(layout).columns.get(fam)?.get(qualifier))?.schema;
}
