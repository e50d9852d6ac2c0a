/**
 * Id assignment (docs/data-model.md, "Names and ids"): locality group ids per table, family ids per locality
 * group, column ids per family; each from 1 in declaration order, skipping explicit ids.
 * These ids name the HBase families/qualifiers of the SHORT translator, so they must be stable.
 */
import type { TableLayoutDescRec } from './layout-avdl.js';
import { badLayout } from './layout-error.js';

function assign(items: { id: number }[], pathOf: (i: number) => string): void {
  const taken = new Map<number, number>();
  items.forEach((item, i) => {
    if (item.id === 0) return;
    const first = taken.get(item.id);
    if (first !== undefined) throw badLayout(`${pathOf(i)}.id`, `id ${item.id} is already used by ${pathOf(first)}`);
    taken.set(item.id, i);
  });
  let next = 1;
  for (const item of items) {
    if (item.id !== 0) continue;
    while (taken.has(next)) next++;
    item.id = next++;
  }
}

/** Fills every id left 0 (unassigned); fails on duplicate explicit ids within a scope. */
export function assignIds(desc: TableLayoutDescRec): void {
  assign(desc.locality_groups, (i) => `locality_groups[${i}]`);
  desc.locality_groups.forEach((lg, i) => {
    assign(lg.families, (j) => `locality_groups[${i}].families[${j}]`);
    lg.families.forEach((fam, j) => assign(fam.columns, (k) => `locality_groups[${i}].families[${j}].columns[${k}]`));
  });
}
