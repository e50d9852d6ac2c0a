/** The route table of each revision (interface-spec.md, "Route table per revision"). */
import type { Revision } from '../config.js';
import type { Handler } from './context.js';
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
}

const TABLE = '/v1/instances/:instance/tables/:table';

const COMMON: Route[] = [
  { method: 'GET', path: '/v1', handler: getRoot },
  { method: 'GET', path: '/v1/version', handler: getVersion },
  { method: 'GET', path: '/v1/openapi.json', handler: getOpenApi },
  { method: 'GET', path: '/v1/instances', handler: getInstances },
  { method: 'GET', path: '/v1/instances/:instance', handler: getInstance },
  { method: 'GET', path: '/v1/instances/:instance/tables', handler: getTables },
  { method: 'GET', path: TABLE, handler: getTable },
  { method: 'GET', path: `${TABLE}/rows`, handler: getRows },
  { method: 'POST', path: `${TABLE}/rows`, handler: postRows },
  { method: 'DELETE', path: `${TABLE}/rows`, handler: deleteRows },
  // Beyond the interface (every revision): split points for parallel exports.
  { method: 'GET', path: `${TABLE}/splits`, handler: getSplits },
];

/** Revisions 1 and 2: entity id conversion (removed in revision 3 by REST-60). */
const ENTITY_ID: Route[] = [{ method: 'GET', path: `${TABLE}/entityId`, handler: getEntityId }];

/** Revision 1 only: the single-row resource (removed in revision 2 by REST-53). */
const SINGLE_ROW: Route[] = [
  { method: 'GET', path: `${TABLE}/rows/:hexEntityId`, handler: getRow },
  { method: 'PUT', path: `${TABLE}/rows/:hexEntityId`, handler: putRow },
];

const TABLES: Record<Revision, Route[]> = {
  1: [...COMMON, ...ENTITY_ID, ...SINGLE_ROW],
  2: [...COMMON, ...ENTITY_ID],
  3: COMMON,
};

/** Routes of other revisions are simply absent, so they are a 404 (RG_ERR_ROUTE_NOT_FOUND). */
export function routesFor(revision: Revision): Route[] {
  return TABLES[revision];
}
