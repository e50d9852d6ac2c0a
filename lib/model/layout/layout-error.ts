/** Error helpers shared by the layout parser: every message starts with the JSON path of the bad field. */
import { rgError, type RowgateError } from '../../errors.js';

/** `path` is like `locality_groups[0].families[1].name`; '' means the layout as a whole. */
export function badLayout(path: string, what: string): RowgateError {
  return rgError('RG_ERR_BAD_LAYOUT', `${path === '' ? 'layout' : path}: ${what}`);
}

export function fieldPath(path: string, field: string): string {
  return path === '' ? field : `${path}.${field}`;
}

/** A short, readable rendering of a JSON value for messages. */
export function show(value: unknown): string {
  if (value === undefined) return 'nothing';
  if (typeof value === 'bigint') return value.toString();
  const text = JSON.stringify(value, (_k, v: unknown) => (typeof v === 'bigint' ? Number(v) : v)) ?? String(value);
  return text.length > 60 ? `${text.slice(0, 57)}...` : text;
}
