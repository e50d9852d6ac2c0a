/**
 * Row matching for scans by an entity id with wildcard `[]` components (FormattedEntityIdRowFilter):
 * each given component is compared as encoded bytes, so matching never decodes a key.
 */
import { rgError } from '../errors.js';
import { buildFormattedKey, checkComponent, componentsToJson, encodeComponent } from './row-key.js';
import { WILDCARD, type ComponentValue, type RowKeyFormat, type Wildcard } from './types.js';

export interface CompiledWildcard {
  /** Leading bytes shared by every matching key, when the hashed components are all given. */
  readonly prefix?: Buffer;
  matches(rowKey: Buffer): boolean;
}

/**
 * Compiles a wildcard entity id. Missing trailing components are wildcards; `null` means the
 * component is absent (so it only matches keys where it is null), unlike a wildcard.
 */
export function compileWildcard(format: RowKeyFormat, components: readonly (ComponentValue | Wildcard)[]): CompiledWildcard {
  if (format.encoding !== 'FORMATTED') {
    throw rgError('RG_ERR_BAD_ENTITY_ID', `wildcard entity id ${componentsToJson(components)} needs a FORMATTED row key format, but this table's row keys are ${format.encoding} and have no components to match`);
  }
  if (format.suppressMaterialization) {
    throw rgError('RG_ERR_BAD_ENTITY_ID', `wildcard entity id ${componentsToJson(components)} cannot be matched: this table suppresses key materialization, so its row keys hold only a hash`);
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
        throw rgError('RG_ERR_BAD_ENTITY_ID', `component '${specs[i]!.name}' (index ${i}) cannot be null (components before index ${format.nullableStartIndex} are required): ${componentsToJson(components)}`);
      }
      if (firstNull < 0) firstNull = i;
      expect[i] = null;
      continue;
    }
    if (firstNull >= 0) {
      throw rgError('RG_ERR_BAD_ENTITY_ID', `component '${specs[i]!.name}' (index ${i}) is not null but follows the null component at index ${firstNull} (only trailing components may be null): ${componentsToJson(components)}`);
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

  return { prefix: fixedPrefix(format, expect, values), matches };
}

/**
 * The salt is known only when every hashed component is given (or absent after a null);
 * the prefix is then the salt plus the leading run of given components.
 */
function fixedPrefix(
  format: Extract<RowKeyFormat, { encoding: 'FORMATTED' }>,
  expect: readonly (Buffer | null | undefined)[],
  values: readonly (string | number | bigint | undefined)[],
): Buffer | undefined {
  const leading: (string | number | bigint)[] = [];
  let i = 0;
  for (; i < expect.length && expect[i] instanceof Buffer; i++) leading.push(values[i]!);
  if (i < format.rangeScanStartIndex && expect[i] !== null) return undefined;
  return buildFormattedKey(format, leading, true);
}
