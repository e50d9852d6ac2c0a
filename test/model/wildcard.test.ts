/**
 * wildcardRowKeyRegex: the RE2 row-key pattern of a wildcard entity id accepts exactly the keys
 * CompiledWildcard.matches accepts. The pattern is checked here with JavaScript's RegExp on the
 * key as Latin-1 text (one character per byte, as Bigtable reads keys), which reads every
 * construct the pattern uses (`\xNN`, `.{n}`, `[^\x00]`, `(?:...)?`) as RE2 does; the emulator
 * test (test/bigtable/store.test.ts) runs the same patterns on Bigtable's side.
 */
import t from 'tap';
import { encodeRowKey } from '../../lib/model/keys/row-key.js';
import { WILDCARD, type ComponentValue, type RowKeyFormat, type Wildcard } from '../../lib/model/types.js';
import { compileWildcard, wildcardRowKeyRegex } from '../../lib/model/keys/wildcard.js';
import {
  F3,
  PLAYERS,
  RKF2_FORMATTED,
  SAMPLE_TABLE,
  formatted,
  prng,
  randomBytes,
  randomInt,
  randomLong,
  randomString,
  randomWildcardPattern,
} from './key-fixtures.js';

type Formatted = Extract<RowKeyFormat, { encoding: 'FORMATTED' }>;

/** The pattern as a JavaScript RegExp with RE2's full-match semantics (`(?s)` -> the s flag). */
function jsRegex(pattern: Buffer): RegExp {
  const text = pattern.toString('latin1');
  if (!text.startsWith('(?s)')) throw new Error(`pattern without (?s): ${text}`);
  return new RegExp(`^(?:${text.slice(4)})$`, 's');
}

const regexMatches = (pattern: Buffer, key: Buffer): boolean => jsRegex(pattern).test(key.toString('latin1'));

t.test('patterns of the reference formats', async (t) => {
  const p = (format: Formatted, components: (ComponentValue | Wildcard)[]) => compileWildcard(format, components).rowKeyRegex.toString('latin1');
  t.equal(p(PLAYERS, [WILDCARD, 'makedonia']), '(?s).{2}[^\\x00]*\\x00makedonia\\x00');
  t.equal(p(PLAYERS, ['seleukos', WILDCARD]), '(?s).{2}seleukos\\x00(?:[^\\x00]*\\x00)?');
  t.equal(p(PLAYERS, ['antipater', null]), '(?s).{2}antipater\\x00');
  t.equal(p(PLAYERS, ['a.b*', WILDCARD]), '(?s).{2}a\\x2eb\\x2a\\x00(?:[^\\x00]*\\x00)?', 'metacharacters are escaped');
  t.equal(p(PLAYERS, []), '(?s).{0,1}|.{2}(?:[^\\x00]*\\x00(?:[^\\x00]*\\x00)?)?', 'no component given: keys shorter than the salt too, as matches()');
  t.equal(p(F3, ['one', WILDCARD, 7]), '(?s).{2}one\\x00.{4}\\x80\\x00\\x00\\x00\\x00\\x00\\x00\\x07');
  t.equal(p(SAMPLE_TABLE, [WILDCARD]), '(?s).{0,1}|.{2}(?:.{8})?');
  t.equal(p(RKF2_FORMATTED, [WILDCARD, 'é', WILDCARD, -1]), '(?s).{2}[^\\x00]*\\x00\\xc3\\xa9\\x00[^\\x00]*\\x00\\x7f\\xff\\xff\\xff(?:.{8})?');
  t.equal(p(RKF2_FORMATTED, [WILDCARD, WILDCARD, null]), '(?s).{0,1}|.{2}(?:[^\\x00]*\\x00(?:[^\\x00]*\\x00)?)?');
  t.equal(wildcardRowKeyRegex(PLAYERS, { components: [undefined, Buffer.from('x\u0000')] }).toString('latin1'), '(?s).{2}[^\\x00]*\\x00x\\x00');
});

t.test('the pattern matches exactly what matches() accepts: random formats, patterns and keys (malformed ones too)', async (t) => {
  const rand = prng(6606);
  const types = ['STRING', 'INTEGER', 'LONG'] as const;
  let checked = 0;
  let accepted = 0;
  let bad = 0;
  for (let f = 0; f < 60; f++) {
    const n = 1 + Math.floor(rand() * 4);
    const format = formatted(
      Array.from({ length: n }, (_, i) => [`c${i}`, types[Math.floor(rand() * 3)]!]),
      { hashSize: 1 + Math.floor(rand() * 4), rangeScanStartIndex: 1 + Math.floor(rand() * n), nullableStartIndex: 1 + Math.floor(rand() * n) },
    );
    // A small pool of values per component, so given components often agree with stored ones.
    const pools = format.components.map((c) =>
      Array.from({ length: 3 }, () => (c.type === 'STRING' ? randomString(rand, 4) : c.type === 'INTEGER' ? randomInt(rand) : randomLong(rand))),
    );
    const keys: Buffer[] = [];
    for (let k = 0; k < 80; k++) {
      const present = format.nullableStartIndex + Math.floor(rand() * (n - format.nullableStartIndex + 1));
      const components = format.components.map((_, i) => (i < present ? pools[i]![Math.floor(rand() * 3)]! : null));
      const key = encodeRowKey(format, components);
      keys.push(key);
      // Malformed neighbours: cut short, one byte more, a byte changed, and random bytes.
      keys.push(key.subarray(0, Math.floor(rand() * key.length)));
      keys.push(Buffer.concat([key, Buffer.from([Math.floor(rand() * 256)])]));
      const changed = Buffer.from(key);
      changed[Math.floor(rand() * changed.length)] = Math.floor(rand() * 256);
      keys.push(changed);
      keys.push(randomBytes(rand, 12));
    }
    for (let p = 0; p < 25; p++) {
      const pattern = randomWildcardPattern(rand, Math.floor(rand() * (n + 1)), format.nullableStartIndex, (i) => pools[i]![Math.floor(rand() * 3)]!);
      const w = compileWildcard(format, pattern);
      const rx = jsRegex(w.rowKeyRegex);
      for (const key of keys) {
        const want = w.matches(key);
        if (rx.test(key.toString('latin1')) !== want) {
          if (bad++ < 5)
            t.fail(
              `format ${JSON.stringify(format.components)} h=${format.hashSize}, pattern ${w.rowKeyRegex.toString('latin1')}, key ${key.toString('hex')}: matches() ${want}`,
            );
        }
        checked++;
        if (want) accepted++;
      }
    }
  }
  t.equal(bad, 0, `${checked} keys checked, ${accepted} accepted`);
  t.ok(accepted > 1000, 'enough matching keys to mean something');
});

t.test('keys with regex metacharacters, newlines, 0x00 and 0xff bytes', async (t) => {
  const format = formatted(
    [
      ['s', 'STRING'],
      ['i', 'INTEGER'],
      ['l', 'LONG'],
    ],
    { nullableStartIndex: 1 },
  );
  const strings = ['.', '*', '\n', '\\x00', '(?:', '[^', '|', '$^', 'a+b?', '{2}', 'ÿ', '€', '😀'];
  const ints = [-2147483648, 2147483647, 10, -1, 0];
  const longs = [-(2n ** 63n), 2n ** 63n - 1n, 10n, 0n];
  const keys: Buffer[] = [];
  for (const s of strings) for (const i of ints) for (const l of longs) keys.push(encodeRowKey(format, [s, i, l]));
  for (const s of strings) keys.push(encodeRowKey(format, [s, null, null]), encodeRowKey(format, [s, 10, null]));
  let bad = 0;
  for (const s of [...strings, WILDCARD] as (string | Wildcard)[]) {
    for (const i of [...ints, WILDCARD, null] as (number | Wildcard | null)[]) {
      for (const l of [...longs, WILDCARD, null] as (bigint | Wildcard | null)[]) {
        if (i === null && l !== null && l !== WILDCARD) continue;
        const w = compileWildcard(format, [s, i, l]);
        for (const key of keys) if (regexMatches(w.rowKeyRegex, key) !== w.matches(key)) bad++;
      }
    }
  }
  t.equal(bad, 0);
  t.equal(keys.filter((k) => compileWildcard(format, ['.', WILDCARD, 2n ** 63n - 1n]).matches(k)).length, ints.length, 'a "." component matches only "."');
});
