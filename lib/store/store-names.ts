/**
 * Names of instances and tables in a store, as both stores accept them: letters, digits and _, at
 * most MAX_NAME_CHARS.
 */
import { rgError } from '../errors.js';
import { MAX_NAME_CHARS } from '../model/layout/layout-names.js';

/**
 * Whether `name` can name an instance or a table in a store. Lookups of any other name are "not
 * found" without touching the store (a 4,087-character name once overflowed lmdb-js's key buffer
 * and answered 500; fuzz seed 105114693).
 */
export function isStoreName(name: string): boolean {
  return name.length <= MAX_NAME_CHARS && STORE_NAME.test(name);
}
const STORE_NAME = /^[a-zA-Z0-9_]+$/;

/** Refuses (RG_ERR_BAD_PARAMETER) the name of a new instance that is not a store name. */
export function checkInstanceName(name: string): void {
  if (!isStoreName(name))
    throw rgError('RG_ERR_BAD_PARAMETER', `invalid instance name ${JSON.stringify(name)}: use letters, digits and _, at most ${MAX_NAME_CHARS} characters`);
}
