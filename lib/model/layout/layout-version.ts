/**
 * Layout version strings (docs/data-model.md, "Layout versions", "Instances and versions"): `[protocol "-"] major ["." minor ["." revision]]`,
 * protocol `layout`, supported layout-1.0.0 .. layout-1.5.0; the deprecated `kiji-1.0` means layout-1.0.0.
 */
import { badLayout } from './layout-error.js';

export interface LayoutVersion {
  readonly major: number;
  readonly minor: number;
  readonly revision: number;
  /** The text kept in the normalized layout: as given, except `kiji-1.0` becomes `layout-1.0.0`. */
  readonly text: string;
}

const GRAMMAR = /^(?:([^-]+)-)?(\d+)(?:\.(\d+)(?:\.(\d+))?)?$/;
const MIN: readonly [number, number, number] = [1, 0, 0];
const MAX: readonly [number, number, number] = [1, 5, 0];

function compare(a: readonly number[], b: readonly number[]): number {
  for (let i = 0; i < 3; i++) if (a[i] !== b[i]) return a[i]! - b[i]!;
  return 0;
}

export function versionName(v: readonly number[]): string {
  return `layout-${v[0]}.${v[1]}.${v[2]}`;
}

/** True when `v` is at least major.minor.revision (the feature gates of 3.3). */
export function atLeast(v: LayoutVersion, major: number, minor: number, revision = 0): boolean {
  return compare([v.major, v.minor, v.revision], [major, minor, revision]) >= 0;
}

export function parseLayoutVersion(text: string): LayoutVersion {
  const m = GRAMMAR.exec(text);
  const protocol = m?.[1];
  if (m === null || (protocol !== undefined && /^\d/.test(protocol))) {
    throw badLayout('version', `"${text}" is not a version; expected e.g. "layout-1.3.0"`);
  }
  const nums = [m[2], m[3], m[4]].map((s) => (s === undefined ? 0 : Number(s)));
  if (nums.some((n) => !Number.isSafeInteger(n) || n > 2147483647)) throw badLayout('version', `"${text}" has a number out of range`);
  if (protocol === 'kiji') {
    // Only kiji-1.0 (trailing zeros ignored) survives, as an alias of layout-1.0.0.
    if (compare(nums, [1, 0, 0]) !== 0) {
      throw badLayout(
        'version',
        `"${text}" is not supported: of the deprecated kiji-x.y versions only kiji-1.0 is accepted (as layout-1.0.0); write a layout version such as "layout-1.5.0"`,
      );
    }
    return { major: 1, minor: 0, revision: 0, text: 'layout-1.0.0' };
  }
  if (protocol !== 'layout') {
    throw badLayout('version', `"${text}" must use the layout protocol, e.g. "layout-1.3.0"`);
  }
  if (compare(nums, MIN) < 0 || compare(nums, MAX) > 0) {
    throw badLayout('version', `"${text}" is not supported: supported layout versions are ${versionName(MIN)} to ${versionName(MAX)}`);
  }
  return { major: nums[0]!, minor: nums[1]!, revision: nums[2]!, text };
}

/** Throws unless the layout version is at least `gate`, naming the feature at `path`. */
export function requireVersion(v: LayoutVersion, gate: readonly [number, number, number], path: string, feature: string): void {
  if (!atLeast(v, gate[0], gate[1], gate[2])) {
    throw badLayout(path, `${feature} requires layout version ${versionName(gate)} or later (this layout is ${versionName([v.major, v.minor, v.revision])})`);
  }
}
