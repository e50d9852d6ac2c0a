/**
 * The `cols` parameter of GET and DELETE rows (and the command line's `--cols`): the columns a read
 * selects or a delete removes. Two forms:
 *
 * - Plain, KijiREST's: comma-separated `*`, `family` or `family:qualifier` (split at the first
 *   ':'), items trimmed, `family:` the same as `family` (Kiji's KijiColumnName reads an empty
 *   qualifier as none). The split happens after percent-decoding, because KijiREST's clients differ:
 *   the Ruby gem encodes the whole value (`,` as %2C), the Python client nothing; so the plain form
 *   cannot name a qualifier that holds a comma, starts or ends with whitespace, or is empty.
 * - JSON: an array of names, `["family", "family:qualifier"]`, each taken exactly as written (no
 *   trimming, commas allowed, `"family:"` is the empty qualifier), so every qualifier a map family
 *   can hold can be named: a row document's keys can be copied into it. A plain value never starts
 *   with `[` (no family name does), so the two cannot be confused.
 *
 * In a DELETE the plain `family:` of a map family is refused: it could mean the family (as Kiji
 * reads it) or the column with the empty qualifier, and deleting the wrong one cannot be undone.
 * Likewise `*` (the whole row) must stand alone there.
 */
import { rgError } from '../../errors.js';
import type { ColumnSelector, TableLayout } from '../types.js';

export type ColumnsUse = 'read' | 'delete';

interface Name {
  readonly family: string;
  /** undefined = the whole family. */
  readonly qualifier: string | undefined;
  /** The item as given, for messages. */
  readonly item: string;
  /** Plain `family:`: read as the family, ambiguous in a map family's DELETE. */
  readonly emptyAfterColon: boolean;
}

/**
 * The selected columns: deduplicated (a family absorbs its own columns), sorted; undefined = every
 * column (`*`). Unknown families and undeclared group columns are RG_ERR_BAD_COLUMNS naming them.
 */
export function parseColumns(layout: TableLayout, text: string | undefined, use: ColumnsUse): readonly ColumnSelector[] | undefined {
  if (text === undefined) return undefined;
  const names = text.startsWith('[') ? jsonNames(text) : plainNames(text, use);
  if (names === undefined) return undefined;
  const families = new Map<string, Set<string> | null>(); // null = the whole family
  for (const name of names) {
    const fam = layout.families.get(name.family);
    if (fam === undefined) {
      throw rgError(
        'RG_ERR_BAD_COLUMNS',
        `cols names an unknown family: ${JSON.stringify(name.family)} (in ${JSON.stringify(name.item)})${commaHint(text, names.length)}`,
      );
    }
    if (name.qualifier === undefined) {
      if (use === 'delete' && name.emptyAfterColon && fam.mapSchema !== undefined) {
        throw rgError(
          'RG_ERR_BAD_COLUMNS',
          `cols item ${JSON.stringify(name.item)} is ambiguous in a DELETE: write ${JSON.stringify(name.family)} to delete the whole family, or cols=${JSON.stringify([name.item])} (the JSON form) to delete the column whose qualifier is empty`,
        );
      }
      families.set(name.family, null);
      continue;
    }
    if (fam.mapSchema === undefined && !fam.columns.some((c) => c.name === name.qualifier)) {
      throw rgError('RG_ERR_BAD_COLUMNS', `cols names an unknown column: ${JSON.stringify(name.item)}`);
    }
    const quals = families.get(name.family);
    if (quals === null) continue;
    if (quals === undefined) families.set(name.family, new Set([name.qualifier]));
    else quals.add(name.qualifier);
  }
  if (families.size === 0) throw rgError('RG_ERR_BAD_COLUMNS', `cols selects no column: ${JSON.stringify(text)}`);
  const out: ColumnSelector[] = [];
  for (const family of [...families.keys()].sort()) {
    const quals = families.get(family);
    if (quals === null || quals === undefined) out.push({ family });
    else for (const qualifier of [...quals].sort()) out.push({ family, qualifier });
  }
  return out;
}

/** The plain form's names; undefined for `*`. */
function plainNames(text: string, use: ColumnsUse): Name[] | undefined {
  const items = text
    .split(',')
    .map((raw) => raw.trim())
    .filter((item) => item !== ''); // "a,,b" and a trailing comma are tolerated
  if (items.includes('*')) {
    if (use === 'read' || items.length === 1) return undefined;
    throw rgError('RG_ERR_BAD_COLUMNS', `cols=* deletes the whole row and cannot be combined with other columns in a DELETE: ${JSON.stringify(text)}`);
  }
  return items.map((item) => {
    const colon = item.indexOf(':');
    if (colon < 0) return { family: item, qualifier: undefined, item, emptyAfterColon: false };
    const qualifier = item.slice(colon + 1);
    return { family: item.slice(0, colon), qualifier: qualifier === '' ? undefined : qualifier, item, emptyAfterColon: qualifier === '' };
  });
}

/** The JSON form's names: exact, `family:` being the empty qualifier. */
function jsonNames(text: string): Name[] {
  let list: unknown;
  try {
    list = JSON.parse(text);
  } catch (e) {
    throw rgError('RG_ERR_BAD_COLUMNS', `cols starts with "[" but is not a JSON array of column names: ${(e as Error).message}`);
  }
  if (!Array.isArray(list) || !list.every((item): item is string => typeof item === 'string')) {
    throw rgError(
      'RG_ERR_BAD_COLUMNS',
      `cols in the JSON form must be an array of strings, each "family" or "family:qualifier", got ${JSON.stringify(text.slice(0, 200))}`,
    );
  }
  return list.map((item) => {
    const colon = item.indexOf(':');
    return colon < 0
      ? { family: item, qualifier: undefined, item, emptyAfterColon: false }
      : { family: item.slice(0, colon), qualifier: item.slice(colon + 1), item, emptyAfterColon: false };
  });
}

/** Where a plain value was split at commas, a name may have held one: say how to send it. */
function commaHint(text: string, items: number): string {
  return !text.startsWith('[') && items > 1
    ? '; "," separates columns in cols: a qualifier holding a comma is named with the JSON form, cols=["family:a,b"]'
    : '';
}
