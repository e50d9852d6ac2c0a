/** Key formats of the reference fixtures (docs/data-model.md, "Worked examples") and a seeded PRNG. */
import { WILDCARD, type ComponentType, type ComponentValue, type RowKeyFormat, type Wildcard } from '../../lib/model/types.js';

type Formatted = Extract<RowKeyFormat, { encoding: 'FORMATTED' }>;

export function formatted(
  components: [string, ComponentType][],
  opts: Partial<Pick<Formatted, 'hashSize' | 'suppressMaterialization' | 'rangeScanStartIndex' | 'nullableStartIndex'>> = {},
): Formatted {
  return {
    encoding: 'FORMATTED',
    hashSize: 2,
    suppressMaterialization: false,
    rangeScanStartIndex: 1,
    nullableStartIndex: 1,
    ...opts,
    components: components.map(([name, type]) => ({ name, type })),
  };
}

/** F1: KR sample_table.json. */
export const SAMPLE_TABLE = formatted([['sequence_number', 'LONG']]);
/** F2: KR rkf2_formatted.json. */
export const RKF2_FORMATTED = formatted([
  ['dummy', 'STRING'],
  ['str1', 'STRING'],
  ['str2', 'STRING'],
  ['anint', 'INTEGER'],
  ['along', 'LONG'],
]);
/** F3: FormattedEntityId javadoc example, range_scan_start_index 2. */
export const F3 = formatted(
  [
    ['dummy', 'STRING'],
    ['anint', 'INTEGER'],
    ['along', 'LONG'],
  ],
  { rangeScanStartIndex: 2 },
);
/** F4: KR rkf2_suppressed.json. */
export const SUPPRESSED = formatted(
  RKF2_FORMATTED.components.map((c) => [c.name, c.type]),
  { suppressMaterialization: true, rangeScanStartIndex: 5 },
);
/** KR players table: player, domain (nullable). */
export const PLAYERS = formatted([
  ['player', 'STRING'],
  ['domain', 'STRING'],
]);
/** docs 1.4.0 operations example table. */
export const DOCS_TABLE = formatted([
  ['c1', 'STRING'],
  ['c2', 'STRING'],
  ['c3', 'STRING'],
  ['c4', 'INTEGER'],
  ['c5', 'LONG'],
]);

export const RAW: RowKeyFormat = { encoding: 'RAW' };
export const HASH: RowKeyFormat = { encoding: 'HASH' };
export const HASH_PREFIX: RowKeyFormat = { encoding: 'HASH_PREFIX', hashSize: 2 };

/** mulberry32: deterministic, so a failing random case can be replayed. */
export function prng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

export function randomBytes(rand: () => number, maxLength: number): Buffer {
  const b = Buffer.alloc(Math.floor(rand() * (maxLength + 1)));
  for (let i = 0; i < b.length; i++) b[i] = Math.floor(rand() * 256);
  return b;
}

const ALPHABET = ['a', 'z', 'A', '0', ' ', '"', "'", '\\', '\n', '\x01', '\x7f', 'é', '€', '日', '😀', '\uFFFD', '[', ']', ','];

/** Strings without U+0000 mixing ASCII, escapes, BMP and astral characters. */
export function randomString(rand: () => number, maxLength = 8): string {
  let s = '';
  const n = Math.floor(rand() * (maxLength + 1));
  for (let i = 0; i < n; i++) s += ALPHABET[Math.floor(rand() * ALPHABET.length)];
  return s;
}

const INT_EDGES = [-2147483648, -2147483647, -1, 0, 1, 2147483646, 2147483647];
const LONG_EDGES = [-(2n ** 63n), -(2n ** 63n) + 1n, -1n, 0n, 1n, 2n ** 53n, 2n ** 63n - 1n];

export function randomInt(rand: () => number): number {
  return rand() < 0.3 ? INT_EDGES[Math.floor(rand() * INT_EDGES.length)]! : Math.floor(rand() * 2 ** 32) - 2 ** 31;
}

export function randomLong(rand: () => number): bigint {
  if (rand() < 0.3) return LONG_EDGES[Math.floor(rand() * LONG_EDGES.length)]!;
  const hi = BigInt(Math.floor(rand() * 2 ** 32));
  const lo = BigInt(Math.floor(rand() * 2 ** 32));
  return BigInt.asIntN(64, (hi << 32n) | lo);
}

/**
 * A random wildcard entity id of `length` components: each a wildcard (40%), from `nullableFrom` on
 * possibly null (after which only nulls and wildcards follow, as trailing nullable components
 * must), or `value(i)`, a given value of component i.
 */
export function randomWildcardPattern(
  rand: () => number,
  length: number,
  nullableFrom: number,
  value: (i: number) => ComponentValue,
): (ComponentValue | Wildcard)[] {
  const pattern: (ComponentValue | Wildcard)[] = [];
  let nulled = false;
  for (let i = 0; i < length; i++) {
    const r = rand();
    if (nulled) pattern.push(r < 0.5 ? null : WILDCARD);
    else if (r < 0.4) pattern.push(WILDCARD);
    else if (r < 0.55 && i >= nullableFrom) {
      pattern.push(null);
      nulled = true;
    } else pattern.push(value(i));
  }
  return pattern;
}
