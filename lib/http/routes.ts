/** The route table of each revision (interface-spec.md, "Route table per revision"). */
import type { Revision } from '../config.js';
import type { Handler } from './context.js';
import { getInstance, getInstances, getRoot, getTable, getTables, getVersion } from './handlers/info.js';
import { getRows } from './handlers/rows-read.js';
import { deleteRows, postRows } from './handlers/rows-write.js';

export interface Route {
  readonly method: 'GET' | 'POST' | 'PUT' | 'DELETE';
  readonly path: string;
  readonly handler: Handler;
}

const TABLE = '/v1/instances/:instance/tables/:table';

const COMMON: Route[] = [
  { method: 'GET', path: '/v1', handler: getRoot },
  { method: 'GET', path: '/v1/version', handler: getVersion },
  { method: 'GET', path: '/v1/instances', handler: getInstances },
  { method: 'GET', path: '/v1/instances/:instance', handler: getInstance },
  { method: 'GET', path: '/v1/instances/:instance/tables', handler: getTables },
  { method: 'GET', path: TABLE, handler: getTable },
  { method: 'GET', path: `${TABLE}/rows`, handler: getRows },
  { method: 'POST', path: `${TABLE}/rows`, handler: postRows },
  { method: 'DELETE', path: `${TABLE}/rows`, handler: deleteRows },
];

export function routesFor(revision: Revision): Route[] {
  switch (revision) {
    case 3:
      return COMMON;
    case 2:
    case 1:
      return COMMON;
  }
}
