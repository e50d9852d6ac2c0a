/**
 * Counter increments, as both stores apply them: a counter is a 64-bit integer, and an increment
 * that would take it outside that range is refused with RG_ERR_BAD_COUNTER, never wrapped.
 */
import { rgError, type RowgateError } from '../errors.js';
import { isInt64 } from '../model/cells/int64.js';

/** The error of an increment of `family:qualifier` by `delta` that overflows. */
export function counterOverflow(family: string, qualifier: string, delta: bigint): RowgateError {
  return rgError('RG_ERR_BAD_COUNTER', `incrementing counter ${family}:${qualifier} by ${delta} overflows a 64-bit integer`);
}

/** `current + delta`, or RG_ERR_BAD_COUNTER thrown when that overflows a 64-bit integer. */
export function incrementedCounter(current: bigint, delta: bigint, family: string, qualifier: string): bigint {
  const next = current + delta;
  if (!isInt64(next)) throw counterOverflow(family, qualifier, delta);
  return next;
}
