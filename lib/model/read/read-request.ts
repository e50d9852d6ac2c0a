/**
 * Query parameters of a row read -> ReadSpec (docs/interface.md, "Reading rows: GET rows"; docs/data-model.md, "Versions, TTL and time ranges"),
 * and the matchers stores use to skip unselected cells without decoding them.
 */

import { rgError } from '../../errors.js';
import { parseColumns } from './columns-param.js';
import { MAX_TIMESTAMP, timestampOf } from '../cells/timestamp.js';
import { FOREVER, type ReadSpec, type TableLayout, type Timestamp } from '../types.js';

export const DEFAULT_LIMIT = 100;

/**
 * The time-range bound meaning "no upper bound": what an empty max becomes, so that a cell at
 * Long.MAX_VALUE, the largest timestamp, is still read. Infinity: every timestamp, number or
 * bigint, compares below it. A max that is written out is exclusive like any other, 2^63-1 too.
 */
export const END_OF_TIME = Infinity;

export interface ReadParams {
  readonly cols?: string;
  readonly versions?: string;
  readonly timerange?: string;
}

/** The read of a request that names no cols, versions or timerange (nearly every point read): made once. */
const DEFAULT_READ: ReadSpec = Object.freeze({ maxVersions: 1, minTimestamp: 0, maxTimestamp: END_OF_TIME });

export function parseReadSpec(layout: TableLayout, params: ReadParams): ReadSpec {
  if (params.cols === undefined && params.versions === undefined && params.timerange === undefined) return DEFAULT_READ;
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
 * `timerange`: `min..max`, half-open [min, max); either side may be empty (0, and no upper bound);
 * both integers from 0 to 2^63-1 with min < max, compared exactly (as BigInt). The original ignored
 * malformed ranges and failed with a 500 on min >= max or a bound beyond a long; all are a 400 here.
 *
 * The bounds are timestamps (lib/model/cells/timestamp.ts: exact, a bigint above 2^53-1). A max
 * written out is exclusive, 9223372036854775807 included (a cell there is not read); only an empty
 * max is END_OF_TIME. An empty max counts as 2^63-1 for min < max, as Kiji's END_OF_TIME did.
 */
export function parseTimerange(text: string | undefined): [Timestamp, Timestamp] {
  if (text === undefined) return [0, END_OF_TIME];
  const m = /^([0-9]*)\.\.([0-9]*)$/.exec(text);
  if (m === null) {
    throw rgError('RG_ERR_BAD_TIMERANGE', `timerange must be min..max with non-negative integer bounds (one side may be empty), got ${JSON.stringify(text)}`);
  }
  const min = m[1] === '' ? 0n : BigInt(m[1]!);
  const max = m[2] === '' ? undefined : BigInt(m[2]!);
  for (const bound of [min, max]) {
    if (bound !== undefined && bound > MAX_TIMESTAMP) {
      throw rgError('RG_ERR_BAD_TIMERANGE', `timerange bounds must be from 0 to ${MAX_TIMESTAMP}, got ${bound} in ${JSON.stringify(text)}`);
    }
  }
  if (!(min < (max ?? MAX_TIMESTAMP))) throw rgError('RG_ERR_BAD_TIMERANGE', `timerange min must be less than max, got ${JSON.stringify(text)}`);
  return [timestampOf(min), max === undefined ? END_OF_TIME : timestampOf(max)];
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

/** [min, max); max END_OF_TIME is unbounded. */
export function timestampInRange(spec: ReadSpec, ts: Timestamp): boolean {
  return ts >= spec.minTimestamp && ts < spec.maxTimestamp;
}
