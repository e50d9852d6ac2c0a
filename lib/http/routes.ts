/**
 * The route table of each revision (interface-spec.md, "Route table per revision"). Each entry
 * gives the route's method, path and handler, and the query parameters it takes: the server checks
 * them before the handler runs (server.ts). What differs between revisions is asked of the
 * revision's dialect.
 */
import type { Revision } from '../config.js';
import { dialectOf, type Dialect } from '../rows/dialect.js';
import type { Handler } from './context.js';
import { FRESH_PREFIX } from './freshening.js';
import type { QueryParams } from './query.js';
import { getInstance, getInstances, getRoot, getTable, getTables, getVersion } from './handlers/info.js';
import { getRows } from './handlers/rows-read.js';
import { getSplits } from './handlers/splits.js';
import { deleteRows, postRows } from './handlers/rows-write.js';
import { getEntityId, getRow, putRow } from './handlers/legacy-rows.js';
import { getOpenApi } from './handlers/openapi.js';

export interface Route {
  readonly method: 'GET' | 'POST' | 'PUT' | 'DELETE';
  readonly path: string;
  readonly handler: Handler;
  /** The query parameters it takes, in the served revision. */
  readonly query: QueryParams;
}

/** An entry as the table writes it: parameters that differ between revisions come from the dialect. */
type RouteEntry = Omit<Route, 'query'> & { readonly query: QueryParams | ((dialect: Dialect) => QueryParams) };

const NONE: QueryParams = { names: new Set() };

const TABLE = '/v1/instances/:instance/tables/:table';

const COMMON: RouteEntry[] = [
  { method: 'GET', path: '/v1', handler: getRoot, query: NONE },
  { method: 'GET', path: '/v1/version', handler: getVersion, query: NONE },
  { method: 'GET', path: '/v1/openapi.json', handler: getOpenApi, query: NONE },
  { method: 'GET', path: '/v1/instances', handler: getInstances, query: NONE },
  { method: 'GET', path: '/v1/instances/:instance', handler: getInstance, query: NONE },
  { method: 'GET', path: '/v1/instances/:instance/tables', handler: getTables, query: NONE },
  { method: 'GET', path: TABLE, handler: getTable, query: NONE },
  {
    method: 'GET',
    path: `${TABLE}/rows`,
    handler: getRows,
    query: (dialect) => ({
      names: dialect.scanParams,
      hints: dialect.rangeHints,
      ...(dialect.freshening
        ? { prefix: FRESH_PREFIX, further: `${FRESH_PREFIX}<key>=<value> (freshener parameters of KijiREST 0.6.0+; accepted and unused, as no freshener runs)` }
        : {}),
    }),
  },
  { method: 'POST', path: `${TABLE}/rows`, handler: postRows, query: NONE },
  { method: 'DELETE', path: `${TABLE}/rows`, handler: deleteRows, query: { names: new Set(['eid', 'eids', 'cols', 'timestamp']) } },
  // Beyond the interface (every revision): split points for parallel exports.
  { method: 'GET', path: `${TABLE}/splits`, handler: getSplits, query: { names: new Set(['n']) } },
];

/** Revisions 1 and 2: entity id conversion (removed in revision 3 by REST-60). */
const ENTITY_ID: RouteEntry[] = [{ method: 'GET', path: `${TABLE}/entityId`, handler: getEntityId, query: { names: new Set(['eid']) } }];

/** Revision 1 only: the single-row resource (removed in revision 2 by REST-53). */
const SINGLE_ROW: RouteEntry[] = [
  { method: 'GET', path: `${TABLE}/rows/:hexEntityId`, handler: getRow, query: { names: new Set(['cols', 'versions', 'timerange']) } },
  {
    method: 'PUT',
    path: `${TABLE}/rows/:hexEntityId`,
    handler: putRow,
    query: {
      names: new Set(['timestamp']),
      further: '<family:qualifier>=<JSON value>, timestamp.<family:qualifier>=<ms>, schema.<family:qualifier>=<Avro schema JSON>',
      handlerChecks: true,
    },
  },
];

function resolved(revision: Revision, entries: readonly RouteEntry[]): Route[] {
  const dialect = dialectOf(revision);
  return entries.map((entry) => ({ ...entry, query: typeof entry.query === 'function' ? entry.query(dialect) : entry.query }));
}

const TABLES: Record<Revision, Route[]> = {
  1: resolved(1, [...COMMON, ...ENTITY_ID, ...SINGLE_ROW]),
  2: resolved(2, [...COMMON, ...ENTITY_ID]),
  3: resolved(3, COMMON),
};

/** Routes of other revisions are simply absent, so they are a 404 (RG_ERR_ROUTE_NOT_FOUND). */
export function routesFor(revision: Revision): Route[] {
  return TABLES[revision];
}
