/**
 * The range of a Java long, which counters (and Avro longs) are: 64-bit two's complement integers,
 * kept exact as bigints.
 */

export const INT64_MIN = -(2n ** 63n);
export const INT64_MAX = 2n ** 63n - 1n;

export function isInt64(v: bigint): boolean {
  return v >= INT64_MIN && v <= INT64_MAX;
}
