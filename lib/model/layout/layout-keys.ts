/**
 * keys_format: validation (docs/data-model.md, "Row keys") and compilation into the RowKeyFormat union.
 * RowKeyFormat (v1) allows RAW/HASH/HASH_PREFIX; RowKeyFormat2 allows RAW/FORMATTED and needs layout-1.1.0.
 */
import type { RowKeyFormat } from '../types.js';
import { NAMESPACE, type RowKeyFormat1Rec, type RowKeyFormat2Rec, type TableLayoutDescRec } from './layout-avdl.js';
import { badLayout } from './layout-error.js';
import { checkName, NameScope } from './layout-names.js';
import { requireVersion, type LayoutVersion } from './layout-version.js';

const P = 'keys_format';

function compileV1(kf: RowKeyFormat1Rec): RowKeyFormat {
  switch (kf.encoding) {
    case 'RAW':
      return { encoding: 'RAW' };
    case 'FORMATTED':
      throw badLayout(
        `${P}.encoding`,
        'FORMATTED keys need a RowKeyFormat2 (with components); these keys were read as the deprecated RowKeyFormat because they carry no RowKeyFormat2 field such as components',
      );
  }
  // Kiji rejects only < 0 and > 16 here, so 0 is a legal (empty) prefix.
  if (kf.hash_size < 0 || kf.hash_size > 16) throw badLayout(`${P}.hash_size`, `must be between 0 and 16 for ${kf.encoding}, got ${kf.hash_size}`);
  if (kf.encoding === 'HASH') {
    // Kiji would fail at the first row with a null hash_type; refuse the layout instead.
    if (kf.hash_type !== 'MD5') throw badLayout(`${P}.hash_type`, 'must be "MD5" for HASH keys');
    return { encoding: 'HASH' };
  }
  return { encoding: 'HASH_PREFIX', hashSize: kf.hash_size };
}

function compileV2(kf: RowKeyFormat2Rec): RowKeyFormat {
  if (kf.encoding === 'RAW') return { encoding: 'RAW' };
  if (kf.encoding !== 'FORMATTED') {
    throw badLayout(
      `${P}.encoding`,
      `${kf.encoding} is not allowed in a RowKeyFormat2 (only RAW or FORMATTED); ${kf.encoding} exists only in the deprecated RowKeyFormat`,
    );
  }
  const n = kf.components.length;
  if (n === 0) throw badLayout(`${P}.components`, 'FORMATTED keys need at least one component');
  const names = new NameScope('component');
  kf.components.forEach((c, i) => {
    checkName(c.name, `${P}.components[${i}].name`, 'component');
    names.add(c.name, `${P}.components[${i}].name`);
  });
  if (kf.salt === null) throw badLayout(`${P}.salt`, 'must not be null for FORMATTED keys (only RAW keys may omit the salt)');
  const salt = kf.salt;
  if (salt.hash_size < 1 || salt.hash_size > 16) throw badLayout(`${P}.salt.hash_size`, `must be between 1 and 16, got ${salt.hash_size}`);
  if (kf.nullable_start_index < 1 || kf.nullable_start_index > n) {
    throw badLayout(`${P}.nullable_start_index`, `must be between 1 and the number of components (${n}), got ${kf.nullable_start_index}`);
  }
  if (kf.range_scan_start_index < 1 || kf.range_scan_start_index > n) {
    throw badLayout(`${P}.range_scan_start_index`, `must be between 1 and the number of components (${n}), got ${kf.range_scan_start_index}`);
  }
  if (salt.suppress_key_materialization && kf.range_scan_start_index !== n) {
    throw badLayout(
      `${P}.range_scan_start_index`,
      `must equal the number of components (${n}) when suppress_key_materialization is true, got ${kf.range_scan_start_index}`,
    );
  }
  return {
    encoding: 'FORMATTED',
    hashSize: salt.hash_size,
    suppressMaterialization: salt.suppress_key_materialization,
    rangeScanStartIndex: kf.range_scan_start_index,
    nullableStartIndex: kf.nullable_start_index,
    components: kf.components.map((c) => ({ name: c.name, type: c.type })),
  };
}

/** Validates the decoded keys_format and compiles it. */
export function compileKeysFormat(desc: TableLayoutDescRec, version: LayoutVersion): RowKeyFormat {
  const { branch, value } = desc.keys_format;
  if (branch === `${NAMESPACE}RowKeyFormat`) return compileV1(value as RowKeyFormat1Rec);
  requireVersion(version, [1, 1, 0], P, 'RowKeyFormat2');
  return compileV2(value as RowKeyFormat2Rec);
}
