/**
 * The route table of each revision (docs/interface.md, "Routes"). Each entry is
 * all there is to know of a route: method, path and handler; the query parameters it takes (checked
 * by the server before the handler runs: server.ts); and what the OpenAPI document says of it
 * (openapi.ts builds the document from these entries): its summary, the shape of its 200 body, the
 * coded errors it can answer. What differs between revisions is asked of the revision's dialect.
 */
import type { Revision } from '../config/config.js';
import type { ErrorCode } from '../errors.js';
import { dialectOf, type Dialect } from '../rows/dialect.js';
import type { Handler } from './context.js';
import { FRESH_PREFIX } from './freshening.js';
import type { QueryParams } from './query.js';
import type { ResultShape } from './serializers.js';
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
  /** The OpenAPI operationId. */
  readonly operationId: string;
  readonly summary: string;
  /** The shape of its 200 body (serializers.ts). */
  readonly result: ResultShape;
  /** The 200 body is a row stream: row documents, each followed by CR LF. */
  readonly stream?: true;
  /** It takes a body of rows (the revision's RowInput). */
  readonly body?: true;
  /** The coded errors it can answer: those any request can meet (EVERY_REQUEST_ERRORS) and its own. */
  readonly errors: readonly ErrorCode[];
}

/**
 * An entry as the table writes it: parameters that differ between revisions come from the
 * dialect; `errors` are the route's own (beyond EVERY_REQUEST_ERRORS).
 */
type RouteEntry = Omit<Route, 'query'> & { readonly query: QueryParams | ((dialect: Dialect) => QueryParams) };

/**
 * Errors any request can meet, whichever route it names (server.ts handle): a bad request line or
 * URL, a bad, repeated or unknown parameter, access control, no such route or method, a bug.
 */
const EVERY_REQUEST_ERRORS: readonly ErrorCode[] = [
  'RG_ERR_BAD_HTTP_REQUEST',
  'RG_ERR_BAD_PARAMETER',
  'RG_ERR_UNAUTHORIZED',
  'RG_ERR_FORBIDDEN',
  'RG_ERR_ROUTE_NOT_FOUND',
  'RG_ERR_METHOD_NOT_ALLOWED',
  'RG_ERR_URL_TOO_LONG',
  'RG_ERR_INTERNAL',
];

const NONE: QueryParams = { names: new Set() };

/** The store unreachable or refusing the gateway: any route that reaches it. */
const STORE: readonly ErrorCode[] = ['RG_ERR_STORE_UNAVAILABLE', 'RG_ERR_STORE_REFUSED'];
/** A write: the store's disk full as well (the embedded store's write-failures.ts). */
const WRITE: readonly ErrorCode[] = [...STORE, 'RG_ERR_STORE_FULL'];
/** A visible instance's table (context.ts tableLayout). */
const TABLE_ERRORS: readonly ErrorCode[] = ['RG_ERR_INSTANCE_NOT_FOUND', 'RG_ERR_TABLE_NOT_FOUND'];
/** A row key in hex in the path (revision 1's single-row resource). */
const PATH_KEY_ERRORS: readonly ErrorCode[] = ['RG_ERR_BAD_ROW_KEY', 'RG_ERR_BAD_ENTITY_ID', 'RG_ERR_ROW_KEY_TOO_LONG'];
/** Entity ids in a parameter or a body (a wildcard where a complete id is needed included). */
const KEY_ERRORS: readonly ErrorCode[] = [...PATH_KEY_ERRORS, 'RG_ERR_WILDCARD_NOT_ALLOWED'];
/** cols, versions and timerange of a read (model/read/read-request.ts). */
const READ_ERRORS: readonly ErrorCode[] = ['RG_ERR_BAD_COLUMNS', 'RG_ERR_BAD_VERSIONS', 'RG_ERR_BAD_TIMERANGE'];
/** A cell written: its column, value, writer schema, counter and timestamp (model/cells/cell-codec.ts). */
const CELL_ERRORS: readonly ErrorCode[] = [
  'RG_ERR_UNKNOWN_COLUMN',
  'RG_ERR_BAD_VALUE',
  'RG_ERR_BAD_SCHEMA',
  'RG_ERR_UNKNOWN_SCHEMA_ID',
  'RG_ERR_BAD_COUNTER',
  'RG_ERR_BAD_TIMESTAMP',
];

const TABLE = '/v1/instances/:instance/tables/:table';

const COMMON: RouteEntry[] = [
  {
    method: 'GET',
    path: '/v1',
    handler: getRoot,
    query: NONE,
    operationId: 'getRoot',
    summary: 'The service and its top-level resources',
    result: 'root',
    errors: [],
  },
  {
    method: 'GET',
    path: '/v1/version',
    handler: getVersion,
    query: NONE,
    operationId: 'getVersion',
    summary: 'Versions of the interface, data format and software',
    result: 'version',
    errors: [],
  },
  {
    method: 'GET',
    path: '/v1/openapi.json',
    handler: getOpenApi,
    query: NONE,
    operationId: 'getOpenApi',
    summary: 'This document: OpenAPI 3.1 of the served revision',
    result: 'openApiDocument',
    errors: [],
  },
  {
    method: 'GET',
    path: '/v1/instances',
    handler: getInstances,
    query: NONE,
    operationId: 'getInstances',
    summary: 'Visible instances',
    result: 'resourceList',
    errors: STORE,
  },
  {
    method: 'GET',
    path: '/v1/instances/:instance',
    handler: getInstance,
    query: NONE,
    operationId: 'getInstance',
    summary: "An instance's metadata (MetadataBackup shape)",
    result: 'instanceMetadata',
    errors: ['RG_ERR_INSTANCE_NOT_FOUND', ...STORE],
  },
  {
    method: 'GET',
    path: '/v1/instances/:instance/tables',
    handler: getTables,
    query: NONE,
    operationId: 'getTables',
    summary: 'Tables of an instance',
    result: 'resourceList',
    errors: ['RG_ERR_INSTANCE_NOT_FOUND', ...STORE],
  },
  {
    method: 'GET',
    path: TABLE,
    handler: getTable,
    query: NONE,
    operationId: 'getTable',
    summary: "A table's layout (Avro JSON TableLayoutDesc)",
    result: 'tableLayout',
    errors: [...TABLE_ERRORS, ...STORE],
  },
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
    operationId: 'getRows',
    summary:
      'Rows: a point get (eid), a bulk get (eids), a wildcard scan, or a range scan; CR LF framed row documents (Accept: application/x-ndjson for LF framing, application/avro for an Avro object container file, application/vnd.apache.arrow.stream for an Arrow IPC stream, application/vnd.apache.parquet for a Parquet file); a complete scan ends with the trailers X-Rowgate-Rows and, when limit stopped it early, X-Rowgate-Next-Start',
    result: 'row',
    stream: true,
    errors: [
      ...TABLE_ERRORS,
      ...READ_ERRORS,
      'RG_ERR_BAD_LIMIT',
      // An Accept naming none of application/json, application/x-ndjson, application/avro, application/vnd.apache.arrow.stream, application/vnd.apache.parquet.
      'RG_ERR_NOT_ACCEPTABLE',
      'RG_ERR_AMBIGUOUS_REQUEST',
      ...KEY_ERRORS,
      'RG_ERR_TOO_MANY_SCANS',
      ...STORE,
    ],
  },
  {
    method: 'POST',
    path: `${TABLE}/rows`,
    handler: postRows,
    query: NONE,
    operationId: 'postRows',
    summary: 'Write one row or an array of rows, validated completely first',
    result: 'targets',
    body: true,
    errors: [
      ...TABLE_ERRORS,
      'RG_ERR_UNSUPPORTED_MEDIA_TYPE',
      'RG_ERR_BODY_TOO_LARGE',
      'RG_ERR_BAD_BODY',
      ...KEY_ERRORS,
      ...CELL_ERRORS,
      'RG_ERR_TOO_MANY_CELLS',
      'RG_ERR_TOO_MANY_WRITES',
      ...WRITE,
    ],
  },
  {
    method: 'DELETE',
    path: `${TABLE}/rows`,
    handler: deleteRows,
    query: { names: new Set(['eid', 'eids', 'cols', 'timestamp']) },
    operationId: 'deleteRows',
    summary: 'Delete rows, families, columns, or versions up to a timestamp',
    result: 'deleted',
    errors: [...TABLE_ERRORS, 'RG_ERR_AMBIGUOUS_REQUEST', ...KEY_ERRORS, 'RG_ERR_BAD_TIMESTAMP', 'RG_ERR_BAD_COLUMNS', ...WRITE],
  },
  // Beyond the interface (every revision): split points for parallel exports.
  {
    method: 'GET',
    path: `${TABLE}/splits`,
    handler: getSplits,
    query: { names: new Set(['n']) },
    operationId: 'getSplits',
    summary:
      "Split points: up to n contiguous row-key ranges covering the table, balanced by estimated size, as start/end values of the revision's range parameters (null = open), for parallel exports",
    result: 'tableSplits',
    errors: [...TABLE_ERRORS, ...STORE],
  },
];

/** Revisions 1 and 2: entity id conversion (removed in revision 3 by REST-60). */
const ENTITY_ID: RouteEntry[] = [
  {
    method: 'GET',
    path: `${TABLE}/entityId`,
    handler: getEntityId,
    query: { names: new Set(['eid']) },
    operationId: 'getEntityId',
    summary: 'The hex row key of an entity id in the shell form',
    result: 'entityIdConversion',
    errors: [...TABLE_ERRORS, ...KEY_ERRORS, ...STORE],
  },
];

/** Revision 1 only: the single-row resource (removed in revision 2 by REST-53). */
const SINGLE_ROW: RouteEntry[] = [
  {
    method: 'GET',
    path: `${TABLE}/rows/:hexEntityId`,
    handler: getRow,
    query: { names: new Set(['cols', 'versions', 'timerange']) },
    operationId: 'getRow',
    summary: 'One row as a plain JSON document',
    result: 'row',
    errors: [...TABLE_ERRORS, ...PATH_KEY_ERRORS, ...READ_ERRORS, ...STORE],
  },
  {
    method: 'PUT',
    path: `${TABLE}/rows/:hexEntityId`,
    handler: putRow,
    query: {
      names: new Set(['timestamp']),
      further: '<family:qualifier>=<JSON value>, timestamp.<family:qualifier>=<ms>, schema.<family:qualifier>=<Avro schema JSON>',
      handlerChecks: true,
    },
    operationId: 'putRow',
    summary: "Write cells given as query parameters; answers with the row's written columns",
    result: 'row',
    errors: [...TABLE_ERRORS, 'RG_ERR_BAD_BODY', ...PATH_KEY_ERRORS, ...CELL_ERRORS, ...WRITE],
  },
];

function resolved(revision: Revision, entries: readonly RouteEntry[]): Route[] {
  const dialect = dialectOf(revision);
  return entries.map((entry) => ({
    ...entry,
    query: typeof entry.query === 'function' ? entry.query(dialect) : entry.query,
    errors: [...EVERY_REQUEST_ERRORS, ...entry.errors],
  }));
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
