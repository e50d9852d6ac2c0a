/**
 * What both stores refuse of a write or a delete because the table's layout has no such family:
 * callers above check columns first, these keep every write path of a store safe on its own.
 */
import { rgError } from '../errors.js';
import type { TableLayout } from '../model/types.js';
import type { RowDelete } from './store.js';

/** Refuses (RG_ERR_UNKNOWN_COLUMN) a written cell whose family the layout does not have. */
export function checkWrittenFamily(layout: TableLayout, cell: { readonly family: string; readonly qualifier: string }): void {
  if (!layout.families.has(cell.family)) throw rgError('RG_ERR_UNKNOWN_COLUMN', `Specified column does not exist: ${cell.family}:${cell.qualifier}`);
}

/** Refuses (RG_ERR_BAD_COLUMNS) a delete of a family the layout does not have. */
export function checkDeletedFamily(layout: TableLayout, d: RowDelete): void {
  if (d.family !== undefined && !layout.families.has(d.family)) {
    throw rgError('RG_ERR_BAD_COLUMNS', `unknown family ${d.family} in table ${layout.name}`);
  }
}
