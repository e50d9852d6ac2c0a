/**
 * Query parameters of a row read -> ReadSpec (DESIGN.md 4.4, kijirest-behaviour.md 2.10, 3.5),
 * and the matchers stores use to skip unselected cells without decoding them.
 */

import { rgError } from '../errors.js';
import { parseColumns } from './columns-param.js';
import { FOREVER, type ReadSpec, type TableLayout } from './types.js';

export const DEFAULT_LIMIT = 100;

/**
 * The time-range bound meaning "no upper bound" (the original's Long.MAX_VALUE): the largest
 * timestamp a cell can have, since every write path takes only safe integers (cell-codec's
 * parseTimestamp, the legacy PUT's timestamp parameters). As with Kiji's END_OF_TIME, a max of
 * END_OF_TIME still reads a cell at END_OF_TIME.
 */
export const END_OF_TIME = Number.MAX_SAFE_INTEGER;

/** A min later than every storable timestamp (2^53, exact as a double): selects no cell. */
const AFTER_END_OF_TIME = END_OF_TIME + 1;
const END_OF_TIME_BIG = BigInt(END_OF_TIME);
/** Kiji's END_OF_TIME, Long.MAX_VALUE: what an empty max means when min and max are compared. */
const LONG_MAX = 2n ** 63n - 1n;

export interface ReadParams {
  readonly cols?: string;
  readonly versions?: string;
  readonly timerange?: string;
}

export function parseReadSpec(layout: TableLayout, params: ReadParams): ReadSpec {
  const [minTimestamp, maxTimestamp] = parseTimerange(params.timerange);
  const columns = parseColumns(layout, params.cols, 'read');
  return { ...(columns && { columns }), maxVersions: parseVersions(params.versions), minTimestamp, maxTimestamp };
}

/** `versions`: a positive integer (larger than FOREVER means all) or all/ALL. Default 1. */
export function parseVersions(text: string | undefined): number {
  if (text === undefined) return 1;
  if (text.toLowerCase() === 'all') return FOREVER;
  if (/^[0-9]+$/.test(text)) {
    const n = Number(text);
    if (n >= 1) return Math.min(n, FOREVER);
  }
  throw rgError('RG_ERR_BAD_VERSIONS', `versions must be a positive integer or "all", got ${JSON.stringify(text)}`);
}

/**
 * `timerange`: `min..max`, half-open [min, max); either side may be empty (0, and Kiji's
 * END_OF_TIME Long.MAX_VALUE); both non-negative integers with min < max, compared exactly
 * (as BigInt, so bounds beyond 2^53 are neither rounded nor refused). The original ignored
 * malformed ranges and failed with a 500 on min >= max; both are a 400 here.
 *
 * What the stores get is clamped to timestamps a cell can have (0 .. END_OF_TIME), which selects
 * exactly the same stored cells: a max at or beyond END_OF_TIME (2^53 - 1, Long.MAX_VALUE, or
 * larger) is END_OF_TIME, i.e. no upper bound; a min beyond END_OF_TIME is 2^53, which no cell
 * reaches (the range is valid but empty). Only cells written by another Bigtable client could
 * have later timestamps, and those are not exact as numbers anyway.
 */
export function parseTimerange(text: string | undefined): [number, number] {
  if (text === undefined) return [0, END_OF_TIME];
  const m = /^([0-9]*)\.\.([0-9]*)$/.exec(text);
  if (m === null) {
    throw rgError('RG_ERR_BAD_TIMERANGE', `timerange must be min..max with non-negative integer bounds (one side may be empty), got ${JSON.stringify(text)}`);
  }
  const min = m[1] === '' ? 0n : BigInt(m[1]!);
  const max = m[2] === '' ? LONG_MAX : BigInt(m[2]!);
  if (!(min < max)) throw rgError('RG_ERR_BAD_TIMERANGE', `timerange min must be less than max, got ${JSON.stringify(text)}`);
  return [min > END_OF_TIME_BIG ? AFTER_END_OF_TIME : Number(min), max >= END_OF_TIME_BIG ? END_OF_TIME : Number(max)];
}

/** `limit`: an integer >= -1 (-1 = all rows), default 100; with `max`, at most max (and not -1). */
export function parseLimit(text: string | undefined, max?: number): number {
  if (text === undefined) return max === undefined ? DEFAULT_LIMIT : Math.min(DEFAULT_LIMIT, max);
  const n = /^-?[0-9]+$/.test(text) ? Number(text) : NaN;
  if (!Number.isSafeInteger(n) || n < -1) throw rgError('RG_ERR_BAD_LIMIT', `limit must be an integer >= -1, got ${JSON.stringify(text)}`);
  if (max !== undefined && (n === -1 || n > max)) {
    throw rgError('RG_ERR_BAD_LIMIT', `limit ${text} exceeds the maximum of ${max} rows per request`);
  }
  return n;
}

// ---------------------------------------------------------------- matchers for stores

export type ColumnFilter = (family: string, qualifier: string) => boolean;

const everyColumn: ColumnFilter = () => true;
const filterCache = new WeakMap<ReadSpec, ColumnFilter>();

/** A fast test of whether a cell's column is selected by `spec` (compiled once per spec). */
export function compileColumnFilter(spec: ReadSpec): ColumnFilter {
  if (spec.columns === undefined) return everyColumn;
  let filter = filterCache.get(spec);
  if (filter === undefined) {
    const byFamily = new Map<string, Set<string> | null>();
    for (const { family, qualifier } of spec.columns) {
      const quals = byFamily.get(family);
      if (qualifier === undefined) byFamily.set(family, null);
      else if (quals === undefined) byFamily.set(family, new Set([qualifier]));
      else if (quals !== null) quals.add(qualifier);
    }
    filter = (family, qualifier) => {
      const quals = byFamily.get(family);
      return quals === null || (quals !== undefined && quals.has(qualifier));
    };
    filterCache.set(spec, filter);
  }
  return filter;
}

/** Whether spec selects family:qualifier; for many cells use compileColumnFilter. */
export function selectsCell(spec: ReadSpec, family: string, qualifier: string): boolean {
  return compileColumnFilter(spec)(family, qualifier);
}

/** The families any cell may be read from; undefined = all (a store can skip other families). */
export function selectedFamilies(spec: ReadSpec): ReadonlySet<string> | undefined {
  return spec.columns === undefined ? undefined : new Set(spec.columns.map((c) => c.family));
}

/** [min, max), except that max END_OF_TIME is unbounded (so a cell at END_OF_TIME is kept). */
export function timestampInRange(spec: ReadSpec, ts: number): boolean {
  return ts >= spec.minTimestamp && (ts < spec.maxTimestamp || spec.maxTimestamp === END_OF_TIME);
}
