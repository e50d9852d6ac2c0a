/**
 * The admin endpoints of KijiREST's Dropwizard 0.6 admin port, which its clients call
 * (the Python client's Ping, GetMetrics, CloseInstance, CloseTable; docs/operations.md,
 * "The admin listener"):
 *
 *   GET  /ping          "pong"
 *   GET  /healthcheck   200 when every check is healthy, else 500; text/plain `* name: OK` /
 *                       `! name: ERROR` lines, or JSON {name: {healthy, message?}} on request
 *   GET  /metrics       (admin-server.ts) JSON when the client accepts application/json
 *   POST /tasks/close?instance=I[&table=T]   drop the store's caches of an instance or a table
 */
import type { IncomingMessage } from 'node:http';
import { isRowgateError, rgError, type RowgateError } from '../errors.js';
import { serialize } from '../http/serializers.js';
import { parseQuery } from '../http/query.js';
import type { Store } from '../store/store.js';

export interface AdminReply {
  readonly status: number;
  readonly contentType: string;
  readonly body: string;
}

const TEXT = 'text/plain; charset=utf-8';
const json = (status: number, body: unknown): AdminReply => ({ status, contentType: 'application/json', body: JSON.stringify(body) });

/**
 * Whether the request's Accept lists application/json (or application/*) with a non-zero q: the
 * Python client asks for JSON, Prometheus scrapers ask for text, and a request without Accept
 * gets what the endpoint served before (text).
 */
export function acceptsJson(req: IncomingMessage): boolean {
  const accept = req.headers.accept;
  if (accept === undefined) return false;
  for (const range of accept.split(',')) {
    const [type, ...params] = range.split(';').map((p) => p.trim().toLowerCase());
    if (type !== 'application/json' && type !== 'application/*') continue;
    const q = params.find((p) => p.startsWith('q='));
    if (q === undefined || Number(q.slice(2)) > 0) return true;
  }
  return false;
}

export const PONG: AdminReply = { status: 200, contentType: TEXT, body: 'pong\n' };

/** One health check's outcome: healthy, or the reason it is not. */
export interface HealthResult {
  readonly healthy: boolean;
  readonly message?: string;
}

/** Dropwizard's /healthcheck: checks sorted by name; 500 when any is unhealthy. */
export function healthcheckReply(results: Readonly<Record<string, HealthResult>>, asJson: boolean): AdminReply {
  const names = Object.keys(results).sort();
  const status = names.every((n) => results[n]!.healthy) ? 200 : 500;
  if (asJson) return json(status, Object.fromEntries(names.map((n) => [n, results[n]])));
  let body = '';
  for (const name of names) {
    const r = results[name]!;
    if (r.healthy) body += r.message === undefined ? `* ${name}: OK\n` : `* ${name}: OK\n  ${r.message}\n`;
    else body += `! ${name}: ERROR\n!  ${r.message ?? ''}\n`;
  }
  return { status, contentType: TEXT, body };
}

/**
 * KijiREST's close task: exactly one `instance`, at most one `table`. What the store caches of
 * them is dropped, so the next request reads the layout (and schema table) again, e.g. after a
 * Bigtable table was re-created by another tool. An unknown instance or table is a 404, so a typo
 * is not answered as done.
 */
/** A refused task in the API's coded error body (docs/errors.md), as the admin listener's other errors. */
function coded(err: RowgateError): AdminReply {
  return { status: err.status, contentType: 'application/json', body: serialize.error(err.toBody()) };
}

export async function closeTask(store: Store, search: string): Promise<AdminReply> {
  let query: ReadonlyMap<string, string>;
  try {
    query = parseQuery(search);
  } catch (e) {
    return coded(isRowgateError(e) ? e : rgError('RG_ERR_BAD_PARAMETER', String(e)));
  }
  for (const name of query.keys()) {
    if (name !== 'instance' && name !== 'table')
      return coded(rgError('RG_ERR_BAD_PARAMETER', `unknown parameter ${name} of /tasks/close (known: instance, table)`));
  }
  const instance = query.get('instance');
  const table = query.get('table');
  if (instance === undefined || instance === '')
    return coded(rgError('RG_ERR_BAD_PARAMETER', '/tasks/close needs instance=<name> (and optionally table=<name>)'));
  if (!(await store.listInstances()).includes(instance)) return coded(rgError('RG_ERR_INSTANCE_NOT_FOUND', `instance ${instance} not found`));
  if (table !== undefined && !(await store.listTables(instance)).includes(table))
    return coded(rgError('RG_ERR_TABLE_NOT_FOUND', `table ${table} not found in instance ${instance}`));
  store.forget(instance, table);
  return { status: 200, contentType: TEXT, body: table === undefined ? `closed instance ${instance}\n` : `closed table ${table} of instance ${instance}\n` };
}
