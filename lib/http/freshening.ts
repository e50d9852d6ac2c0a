/**
 * Freshening parameters of GET rows (revisions 2 and 3). KijiREST 0.6.0 declared `freshen`,
 * `timeout` and `fresh.<key>` (docs/interface.md, "What KijiREST did that rowgate does the same way"): fresheners re-computed stale columns
 * on read, waiting at most `timeout` ms before returning the stored cells. rowgate runs no
 * fresheners, so it accepts the parameters (its clients and JMeter samplers send them), checks
 * their values, and reads the stored cells; a request that asks for freshening is told so by the
 * FRESHENING_HEADER of its response.
 */
import { rgError } from '../errors.js';
import type { Query } from './query.js';
import { INT64_MAX } from '../model/cells/int64.js';

export const FRESH_PREFIX = 'fresh.';

/** Set on a GET rows response whose request asked for freshening: the cells are the stored ones. */
export const FRESHENING_HEADER = 'x-rowgate-freshening';
export const FRESHENING_STORED = 'none (stored cells: rowgate runs no fresheners)';

/**
 * Checks the freshening parameters of `query` and says whether the request asks for freshening:
 * `freshen=true`, or freshening parameters without `freshen` (KijiREST's configured default was
 * to freshen). `freshen` is true or false (KijiREST read anything but "true" as false; here a
 * misspelt value is a 400), `timeout` a non-negative integer of ms.
 */
export function asksForFreshening(query: Query): boolean {
  const freshen = query.get('freshen');
  if (freshen !== undefined && !/^(true|false)$/i.test(freshen)) {
    throw rgError('RG_ERR_BAD_PARAMETER', `freshen must be true or false, got ${JSON.stringify(freshen.slice(0, 100))}`);
  }
  // KijiREST's `timeout` is a Java long: at most INT64_MAX.
  const timeout = query.get('timeout');
  if (timeout !== undefined && (!/^\d{1,19}$/.test(timeout) || BigInt(timeout) > INT64_MAX)) {
    throw rgError('RG_ERR_BAD_PARAMETER', `timeout must be a non-negative integer of milliseconds, got ${JSON.stringify(timeout.slice(0, 100))}`);
  }
  if (freshen !== undefined) return freshen.toLowerCase() === 'true';
  if (timeout !== undefined) return true;
  for (const name of query.keys()) if (name.startsWith(FRESH_PREFIX)) return true;
  return false;
}
