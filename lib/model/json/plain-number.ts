/**
 * A JSON number's value read straight from its UTF-8 bytes when its text is plain, for the scan
 * threads' Arrow fill (lib/rows/formats/arrow-fill.ts), which would otherwise make a string of each
 * stored value for Number() or BigInt() (a string and a regular expression a value were ~20% of a
 * scan thread's Arrow row). NaN means "not plain": the caller reads the text as before.
 *
 * plainDecimal is exact: a text of at most 15 digits is an integer m < 2^53 and a power of ten of
 * at most 22 is exact too, so m / 10^k, rounded once by the division, is the double nearest the
 * decimal, which is what Number() gives for the same text (the classic exact fast path of decimal
 * conversion, Clinger 1990).
 */
const MINUS = 0x2d;
const ZERO = 0x30;
const DOT = 0x2e;
/** Digits of a plain number: below 10^15, under 2^53. */
const MAX_DIGITS = 15;
const POWERS = Array.from({ length: MAX_DIGITS + 1 }, (_, k) => 10 ** k);

/** The integer `-?(0|[1-9][0-9]*)` of at most `maxDigits` (<= 15) digits in `b[start, end)`; NaN otherwise. */
export function plainInteger(b: Uint8Array, start: number, end: number, maxDigits: number): number {
  const negative = b[start] === MINUS;
  let p = negative ? start + 1 : start;
  const digits = end - p;
  if (digits < 1 || digits > maxDigits || (b[p] === ZERO && digits > 1)) return NaN;
  let n = 0;
  for (; p < end; p++) {
    const d = b[p]! - ZERO;
    if (d < 0 || d > 9) return NaN;
    n = n * 10 + d;
  }
  return negative ? -n : n;
}

/** The number `-?(0|[1-9][0-9]*)(\.[0-9]+)?` of at most 15 digits in `b[start, end)`, as Number() reads it; NaN otherwise (an exponent, more digits). */
export function plainDecimal(b: Uint8Array, start: number, end: number): number {
  const negative = b[start] === MINUS;
  let p = negative ? start + 1 : start;
  const first = p;
  let n = 0;
  let dot = -1;
  for (; p < end; p++) {
    const c = b[p]!;
    const d = c - ZERO;
    if (d >= 0 && d <= 9) n = n * 10 + d;
    else if (c === DOT && dot < 0 && p > first && p + 1 < end) dot = p;
    else return NaN;
  }
  const digits = end - first - (dot < 0 ? 0 : 1);
  const intDigits = (dot < 0 ? end : dot) - first;
  if (digits < 1 || digits > MAX_DIGITS || (b[first] === ZERO && intDigits > 1)) return NaN;
  const value = dot < 0 ? n : n / POWERS[end - dot - 1]!;
  return negative ? -value : value;
}

/**
 * The plain reader of a number type's JSON text (an int's at most 9 digits always fit 32 bits, a
 * long's 15 a double), for the columnar encoders reading stored values; undefined for another
 * type. A float is read as its double: the encoder rounds it as Number()'s value would be.
 */
export function plainNumberReader(kind: string | undefined): ((b: Uint8Array, start: number, end: number) => number) | undefined {
  switch (kind) {
    case 'int':
      return (b, start, end) => plainInteger(b, start, end, 9);
    case 'long':
      return (b, start, end) => plainInteger(b, start, end, MAX_DIGITS);
    case 'double':
    case 'float':
      return plainDecimal;
    default:
      return undefined;
  }
}
