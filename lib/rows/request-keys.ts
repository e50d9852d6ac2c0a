/**
 * Row keys named by a request, checked before the store sees them: one entity id (storableKey)
 * or an `eids` list (bulkKeys), for GET rows, DELETE and the command line alike.
 */
import { rgError } from '../errors.js';
import { resolveEntityId } from '../model/keys/entity-id.js';
import { parseExactJson } from '../model/json/exact-json.js';
import type { EntityIdInput, TableLayout } from '../model/types.js';
import type { Dialect } from './dialect.js';

/**
 * A row key given in a request, checked against the store's key limit: no longer key can have been
 * written, and the store cannot even seek to one, so it is a client error (not a 500).
 */
export function storableKey(key: Buffer, maxBytes: number, what: string): Buffer {
  if (key.length > maxBytes) throw rgError('RG_ERR_ROW_KEY_TOO_LONG', `${what} is a row key of ${key.length} bytes; the store accepts at most ${maxBytes}`);
  return key;
}

/**
 * `eids` (bulk get and DELETE): a JSON array of entity ids, each an array of components or a row
 * key string form in the dialect's forms; the distinct row keys in request order.
 */
export function bulkKeys(text: string, layout: TableLayout, dialect: Dialect, maxEids: number, maxRowKeyBytes: number): Buffer[] {
  const list = parseExactJson(text, 'eids');
  if (!Array.isArray(list)) throw rgError('RG_ERR_BAD_ENTITY_ID', 'eids must be a JSON array of entity ids');
  if (list.length > maxEids) {
    throw rgError('RG_ERR_BAD_PARAMETER', `eids has ${list.length} entity ids; at most ${maxEids} are allowed per request`);
  }
  const seen = new Set<string>();
  const keys: Buffer[] = [];
  for (const item of list) {
    const input: EntityIdInput = dialect.bulkItem(item, layout.keyFormat);
    const key = storableKey(resolveEntityId(layout.keyFormat, input), maxRowKeyBytes, 'an entity id of eids');
    const id = key.toString('latin1');
    if (!seen.has(id)) {
      seen.add(id);
      keys.push(key);
    }
  }
  return keys;
}
