/**
 * Row matching for scans by an entity id with wildcard `[]` components (FormattedEntityIdRowFilter):
 * each given component is compared as encoded bytes, so matching never decodes a key. The same
 * match is also compiled into a row-key regular expression (wildcardRowKeyRegex) that a store can
 * evaluate server-side (Bigtable's rowKeyRegexFilter).
 */
import { rgError } from '../../errors.js';
import { buildFormattedKey, checkComponent, componentsToJson, encodeComponent } from './row-key.js';
import { WILDCARD, type ComponentValue, type RowKeyFormat, type Wildcard } from '../types.js';

type FormattedFormat = Extract<RowKeyFormat, { encoding: 'FORMATTED' }>;

/**
 * What one key component of a wildcard must be: its encoded bytes (STRING terminator included),
 * null = absent (the key ends before it), undefined = any value or absent when trailing.
 */
export type ComponentMatch = Buffer | null | undefined;

export interface CompiledWildcard {
  /** Leading bytes shared by every matching key, when the hashed components are all given. */
  readonly prefix?: Buffer;
  /** One entry per component of the key format. */
  readonly components: readonly ComponentMatch[];
  /** RE2 pattern (bytes) fully matching exactly the keys `matches` accepts (wildcardRowKeyRegex). */
  readonly rowKeyRegex: Buffer;
  matches(rowKey: Buffer): boolean;
}

/**
 * Compiles a wildcard entity id. Missing trailing components are wildcards; `null` means the
 * component is absent (so it only matches keys where it is null), unlike a wildcard.
 */
export function compileWildcard(format: RowKeyFormat, components: readonly (ComponentValue | Wildcard)[]): CompiledWildcard {
  if (format.encoding !== 'FORMATTED') {
    throw rgError(
      'RG_ERR_BAD_ENTITY_ID',
      `wildcard entity id ${componentsToJson(components)} needs a FORMATTED row key format, but this table's row keys are ${format.encoding} and have no components to match`,
    );
  }
  if (format.suppressMaterialization) {
    throw rgError(
      'RG_ERR_BAD_ENTITY_ID',
      `wildcard entity id ${componentsToJson(components)} cannot be matched: this table suppresses key materialization, so its row keys hold only a hash`,
    );
  }
  const specs = format.components;
  const n = specs.length;
  if (components.length > n) {
    throw rgError('RG_ERR_BAD_ENTITY_ID', `entity id has ${components.length} components but the table key has ${n}: ${componentsToJson(components)}`);
  }
  // expect[i]: encoded bytes (STRING terminator included), null = absent, undefined = any.
  const expect: (Buffer | null | undefined)[] = new Array(n).fill(undefined);
  const values: (string | number | bigint | undefined)[] = new Array(n).fill(undefined);
  let firstNull = -1;
  for (let i = 0; i < components.length; i++) {
    const c = components[i]!;
    if (c === WILDCARD) continue;
    if (c === null) {
      if (i < format.nullableStartIndex) {
        throw rgError(
          'RG_ERR_BAD_ENTITY_ID',
          `component '${specs[i]!.name}' (index ${i}) cannot be null (components before index ${format.nullableStartIndex} are required): ${componentsToJson(components)}`,
        );
      }
      if (firstNull < 0) firstNull = i;
      expect[i] = null;
      continue;
    }
    if (firstNull >= 0) {
      throw rgError(
        'RG_ERR_BAD_ENTITY_ID',
        `component '${specs[i]!.name}' (index ${i}) is not null but follows the null component at index ${firstNull} (only trailing components may be null): ${componentsToJson(components)}`,
      );
    }
    values[i] = checkComponent(specs[i]!, i, c);
    expect[i] = encodeComponent(values[i]!);
  }

  // Keys end after any component: a key may stop at i only if nothing from i on must be present.
  const canEndAt: boolean[] = new Array(n + 1).fill(true);
  for (let i = n - 1; i >= 0; i--) canEndAt[i] = canEndAt[i + 1]! && !(expect[i] instanceof Buffer);
  // 0 = STRING (variable, 0x00-terminated), else the fixed width.
  const widths = specs.map((s) => (s.type === 'STRING' ? 0 : s.type === 'INTEGER' ? 4 : 8));
  const h = format.hashSize;

  const matches = (key: Buffer): boolean => {
    let pos = h;
    const len = key.length;
    for (let i = 0; i < n; i++) {
      if (pos >= len) return canEndAt[i]!;
      const w = widths[i]!;
      let end: number;
      if (w === 0) {
        end = key.indexOf(0, pos);
        if (end < 0) return false;
        end++;
      } else {
        end = pos + w;
        if (end > len) return false;
      }
      const e = expect[i];
      if (e === null) return false;
      if (e !== undefined) {
        if (end - pos !== e.length) return false;
        for (let j = 0; j < e.length; j++) if (key[pos + j] !== e[j]) return false;
      }
      pos = end;
    }
    return pos === len;
  };

  return { prefix: fixedPrefix(format, expect, values), components: expect, rowKeyRegex: wildcardRowKeyRegex(format, { components: expect }), matches };
}

/**
 * An RE2 pattern that fully matches exactly the row keys CompiledWildcard.matches accepts, for a
 * server-side row-key filter (Bigtable's rowKeyRegexFilter, full-match semantics). Bigtable reads
 * row keys as Latin-1 (one character per byte), so the pattern works on bytes:
 *
 * - `(?s)` first, so `.` is any byte (newline included; the same as `\C` there);
 * - the salt: `.{hashSize}`;
 * - a given component: its encoded bytes, letters and digits as themselves and every other byte
 *   as `\xNN` (RE2 reads `\xNN` as the character U+00NN, which is byte NN in Latin-1: raw bytes
 *   >= 0x80 would instead be read as UTF-8), a STRING with its 0x00 terminator;
 * - a wildcard STRING: `[^\x00]*\x00` (a STRING always ends with its terminator, the last one
 *   too, as in matches()); a wildcard INTEGER `.{4}`, LONG `.{8}`;
 * - a null (absent) component: the key ends there;
 * - a key may end before component i when no component from i on is given: the rest from i is an
 *   optional group `(?:...)?`. When no component is given at all, keys shorter than the salt
 *   match too (as in matches(), which never looks at the salt).
 *
 * The pattern is ASCII; it must be sent as bytes (a Buffer), not a string: the client's protobuf
 * encoder reads a string for a bytes field as base64.
 */
export function wildcardRowKeyRegex(format: FormattedFormat, compiled: Pick<CompiledWildcard, 'components'>): Buffer {
  const specs = format.components;
  const expect = compiled.components;
  const n = specs.length;
  let tail = '';
  let canEnd = true; // no component from i on is given
  for (let i = n - 1; i >= 0; i--) {
    const e = expect[i];
    if (e === null) {
      // Absent: a key with this component present never matches, so the key ends here.
      tail = '';
      continue;
    }
    const type = specs[i]!.type;
    const component = e instanceof Buffer ? literalPattern(e) : type === 'STRING' ? '[^\\x00]*\\x00' : type === 'INTEGER' ? '.{4}' : '.{8}';
    if (e instanceof Buffer) canEnd = false;
    tail = canEnd ? `(?:${component}${tail})?` : `${component}${tail}`;
  }
  const h = format.hashSize;
  const body = `.{${h}}${tail}`;
  return Buffer.from(`(?s)${canEnd && h > 0 ? `.{0,${h - 1}}|${body}` : body}`, 'latin1');
}

/** Bytes as a regex literal: letters and digits as themselves, every other byte `\xNN`. */
function literalPattern(bytes: Buffer): string {
  let out = '';
  for (const b of bytes) {
    const plain = (b >= 0x30 && b <= 0x39) || (b >= 0x41 && b <= 0x5a) || (b >= 0x61 && b <= 0x7a);
    out += plain ? String.fromCharCode(b) : `\\x${b.toString(16).padStart(2, '0')}`;
  }
  return out;
}

/**
 * The salt is known only when every hashed component is given (or absent after a null);
 * the prefix is then the salt plus the leading run of given components.
 */
function fixedPrefix(
  format: FormattedFormat,
  expect: readonly (Buffer | null | undefined)[],
  values: readonly (string | number | bigint | undefined)[],
): Buffer | undefined {
  const leading: (string | number | bigint)[] = [];
  let i = 0;
  for (; i < expect.length && expect[i] instanceof Buffer; i++) leading.push(values[i]!);
  if (i < format.rangeScanStartIndex && expect[i] !== null) return undefined;
  return buildFormattedKey(format, leading, true);
}
