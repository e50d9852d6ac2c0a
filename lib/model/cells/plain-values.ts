/**
 * The cell codec's rule for values it stores exactly as written (cell-codec.ts plainColumnOf): a
 * value of a plain column (string, long, int, double, boolean; no writer_schema) whose JSON text is
 * the canonical text the codec would print for it. encodeCell parses and prints a value; for a text
 * these functions accept, that print is the text itself, so `rowgate import` takes such values from
 * a line's bytes without parsing them (lib/store/lmdb/plain-line.ts finds the line's shape and the
 * spans; these decide whether a span is a valid value as written). Anything they refuse goes to
 * encodeCell, which stores it or names what is wrong; test/store/plain-line.test.ts compares both
 * over thousands of generated rows.
 *
 * Each function reads `b` from `p` (never past `limit`) and answers where the value ends, or -1.
 */
import type { PlainKind } from './cell-codec.js';

const QUOTE = 0x22;
const MINUS = 0x2d;
const DOT = 0x2e;
const ZERO = 0x30;
const NINE = 0x39;
const SPACE = 0x20;
const BACKSLASH = 0x5c;
const TILDE = 0x7e;
const TRUE = Buffer.from('true', 'latin1');
const FALSE = Buffer.from('false', 'latin1');

/** Digits of an integer taken as written: up to 15 every integer is a safe double, printed back as given. */
const MAX_DIGITS = 15;

/** The end of a value of `kind` at `p` written in the codec's canonical text; -1 otherwise. */
export function plainValueEnd(kind: PlainKind, b: Uint8Array, p: number, limit: number): number {
  switch (kind) {
    case 'string': {
      const close = plainStringClose(b, p, limit);
      return close < 0 ? -1 : close + 1;
    }
    case 'boolean':
      if (matches(b, p, limit, TRUE)) return p + TRUE.length;
      return matches(b, p, limit, FALSE) ? p + FALSE.length : -1;
    case 'long':
      return canonicalIntegerEnd(b, p, limit);
    case 'int': {
      const end = canonicalIntegerEnd(b, p, limit);
      if (end < 0) return -1;
      const v = b[p] === MINUS ? -digitsValue(b, p + 1, end) : digitsValue(b, p, end);
      return v >= -2147483648 && v <= 2147483647 ? end : -1;
    }
    case 'double':
      return canonicalDoubleEnd(b, p, limit);
  }
}

/**
 * The end of a cell timestamp at `p` taken as written: a non-negative integer of at most 15 digits
 * in canonical form; -1 otherwise (a negative one, -1 skipping the cell, a fraction Jackson would
 * truncate, a digit string: the codec's timestampFromJson decides those).
 */
export function plainTimestampEnd(b: Uint8Array, p: number, limit: number): number {
  return b[p] === MINUS ? -1 : canonicalIntegerEnd(b, p, limit);
}

/** The value of the decimal digits b[p, end) (at most 15: exact). */
export function digitsValue(b: Uint8Array, p: number, end: number): number {
  let v = 0;
  for (let q = p; q < end; q++) v = v * 10 + (b[q]! - ZERO);
  return v;
}

/**
 * A string of printable ASCII without escapes at `p` (a name, or a string value): the position of
 * its closing quote, or -1. Its JSON text is then exactly what JSON.stringify writes for it.
 */
export function plainStringClose(b: Uint8Array, p: number, limit: number): number {
  if (b[p] !== QUOTE) return -1;
  for (let q = p + 1; q < limit; q++) {
    const c = b[q]!;
    if (c === QUOTE) return q;
    if (c < SPACE || c > TILDE || c === BACKSLASH) return -1;
  }
  return -1;
}

/**
 * The end of a JSON integer of at most 15 digits in canonical form (no leading zero, not -0) not
 * followed by a fraction or exponent; -1 otherwise.
 */
function canonicalIntegerEnd(b: Uint8Array, p: number, limit: number): number {
  const negative = b[p] === MINUS;
  const first = negative ? p + 1 : p;
  let q = first;
  while (q < limit && b[q]! >= ZERO && b[q]! <= NINE) q++;
  const digits = q - first;
  if (digits === 0 || digits > MAX_DIGITS) return -1;
  if (b[first] === ZERO && (digits > 1 || negative)) return -1;
  const next = b[q];
  if (next === DOT || next === 0x65 || next === 0x45) return -1;
  return q;
}

/**
 * The end of a JSON number at `p` whose text is the one a double prints as (String(Number(text)));
 * -1 otherwise. Integers of up to 15 digits are canonical as written.
 */
function canonicalDoubleEnd(b: Uint8Array, p: number, limit: number): number {
  const simple = canonicalIntegerEnd(b, p, limit);
  if (simple >= 0) return simple;
  let q = p;
  if (b[q] === MINUS) q++;
  const intStart = q;
  while (q < limit && b[q]! >= ZERO && b[q]! <= NINE) q++;
  if (q === intStart || (b[intStart] === ZERO && q - intStart > 1)) return -1;
  const intDigits = q - intStart;
  let fracStart = q;
  if (b[q] === DOT) {
    fracStart = ++q;
    while (q < limit && b[q]! >= ZERO && b[q]! <= NINE) q++;
    if (q === fracStart) return -1;
  }
  if (b[q] === 0x65 || b[q] === 0x45) {
    q++;
    if (b[q] === 0x2b || b[q] === MINUS) q++;
    const expStart = q;
    while (q < limit && b[q]! >= ZERO && b[q]! <= NINE) q++;
    if (q === expStart) return -1;
  } else if (q > fracStart && b[q - 1] !== ZERO) {
    // A decimal of at most 15 significant digits, no trailing zero, at least 1e-6: the double
    // nearest it prints back as that text (15 digits always survive a double; a shorter text
    // would be another decimal of 15 digits or fewer naming the same double). No string made.
    let leadingZeros = 0;
    if (intDigits === 1 && b[intStart] === ZERO) while (b[fracStart + leadingZeros] === ZERO) leadingZeros++;
    const significant = leadingZeros > 0 || (intDigits === 1 && b[intStart] === ZERO) ? q - fracStart - leadingZeros : intDigits + q - fracStart;
    if (significant <= MAX_DIGITS && leadingZeros < 6) return q;
  }
  const text = Buffer.from(b.buffer, b.byteOffset + p, q - p).toString('latin1');
  return String(Number(text)) === text ? q : -1;
}

function matches(b: Uint8Array, p: number, limit: number, bytes: Uint8Array): boolean {
  if (p + bytes.length > limit) return false;
  for (let k = 0; k < bytes.length; k++) if (b[p + k] !== bytes[k]) return false;
  return true;
}
