/**
 * The OpenAPI 3.1 document of the served revision (`GET /v1/openapi.json`). Paths come from the
 * revision's route table (routes.ts) and response shapes from the very schemas the serializers
 * compile (serializers.ts), so the document cannot drift from what is served: a route without a
 * description here makes the generator throw, and test/http/openapi.test.ts validates real
 * responses of every endpoint against the document.
 *
 * Row streams (GET rows) are `application/json` bodies holding a sequence of row documents, each
 * followed by CR LF (DESIGN.md 4). OpenAPI 3.1 has no keyword for such a sequence, so the schema
 * given is the one every framed document satisfies, and the extension `x-rowgate-stream` says so.
 */
import type { Revision } from '../config.js';
import { ERRORS } from '../errors.js';
import { REST_VERSION } from '../version.js';
import { dialectOf } from '../rows/dialect.js';
import { SPLITS_SCHEMA } from './handlers/splits.js';
import { routesFor, type Route } from './routes.js';
import { schemas, type Schema } from './serializers.js';

type Json = { [key: string]: unknown };

const ref = (name: string): Json => ({ $ref: `#/components/schemas/${name}` });

/** What each query parameter means, and its shape as text (all arrive as strings). */
const QUERY_PARAMS: Record<string, { description: string; schema: Json }> = {
  eid: {
    description:
      "One entity id (revision 3: JSON array of components or rowkey=/rowkey_hex=; revisions 1-2: the shell form, e.g. [12345] or ['a', 'b']); [] components are wildcards on GET (revisions 2-3)",
    schema: { type: 'string' },
  },
  eids: { description: 'A JSON array of entity ids (bulk get or delete)', schema: { type: 'string' } },
  start_eid: { description: 'First row key of a range scan (inclusive), any entity id form', schema: { type: 'string' } },
  end_eid: { description: 'End of a range scan (exclusive), any entity id form', schema: { type: 'string' } },
  start_rk: { description: 'First row key of a range scan (inclusive), in hex', schema: { type: 'string', pattern: '^([0-9a-fA-F]{2})*$' } },
  end_rk: { description: 'End of a range scan (exclusive), in hex', schema: { type: 'string', pattern: '^([0-9a-fA-F]{2})*$' } },
  limit: { description: 'Most rows returned; -1 for all', schema: { type: 'string', pattern: '^-?[0-9]+$' } },
  cols: {
    description:
      'Columns: * (all), or comma-separated family and family:qualifier names (trimmed; family: is the family; refused for a map family on DELETE), or a JSON array of exact names such as ["logins:a,b","logins:"] (no trimming, commas allowed, family: is the empty qualifier)',
    schema: { type: 'string' },
  },
  versions: { description: 'Versions per column: a positive integer or all', schema: { type: 'string', pattern: '^([1-9][0-9]*|all)$' } },
  timerange: { description: 'min..max in milliseconds, min < max; one side may be empty', schema: { type: 'string', pattern: '^[0-9]*\\.\\.[0-9]*$' } },
  freshen: {
    description:
      'Accepted for KijiREST clients (revisions 2-3): true or false. rowgate runs no fresheners and returns the stored cells; a request asking for freshening gets the response header X-Rowgate-Freshening',
    schema: { type: 'string', pattern: '^([Tt][Rr][Uu][Ee]|[Ff][Aa][Ll][Ss][Ee])$' },
  },
  timeout: {
    description: 'Accepted for KijiREST clients (revisions 2-3): the freshening wait in ms, a non-negative integer; ignored, as no freshener runs',
    schema: { type: 'string', pattern: '^[0-9]{1,19}$' },
  },
  n: { description: 'Ranges wanted at most (1 to 1024; default 1)', schema: { type: 'string', pattern: '^[0-9]+$' } },
  timestamp: {
    description: 'Milliseconds: on DELETE, remove versions up to this timestamp; on PUT (revision 1), the timestamp of the written cells',
    schema: { type: 'string', pattern: '^[0-9]+$' },
  },
};

const PATH_PARAMS: Record<string, string> = {
  instance: 'Instance name',
  table: 'Table name',
  hexEntityId: 'The row key in hex',
};

/** The POST rows body of a revision: one row or an array of rows. */
function rowInput(revision: Revision): Schema {
  const dialect = dialectOf(revision);
  const entityId: Schema = dialect.jsonEntityIds
    ? { anyOf: [{ type: 'array', items: { type: ['string', 'integer', 'null', 'array'] } }, { type: 'string' }] }
    : { type: 'string', description: "The shell form, e.g. [12345] or ['a', 'b']" };
  const cell: Schema = {
    type: 'object',
    properties: {
      value: { description: 'The value in Avro JSON; on a counter column an integer sets it and {"incr": n} adds n' },
      timestamp: { type: 'integer', minimum: -1, description: 'Milliseconds; -1 skips the cell (as KijiREST did), the rest of the row is written' },
      ...(!dialect.rowInput.writerSchemas
        ? {}
        : { writer_schema: { description: 'A schema id, a type name, or an Avro schema', type: ['integer', 'string', 'object', 'array'] } }),
    },
    required: ['value'],
    additionalProperties: false,
  };
  const row: Schema = {
    type: 'object',
    properties: {
      entityId,
      ...(dialect.rowInput.rowKeyField
        ? {
            rowKey: {
              type: 'string',
              pattern: '^([0-9a-fA-F]{2})*$',
              description: 'The hex row key, as KijiREST 0.4.0 rows had it: accepted when it names the row entityId names',
            },
          }
        : {}),
      cells: { type: 'object', additionalProperties: { type: 'object', additionalProperties: { type: 'array', items: cell } } },
    },
    required: ['entityId'],
    additionalProperties: false,
  };
  return { oneOf: [row, { type: 'array', items: row }] };
}

const ROW_SCHEMA: Record<Revision, Schema> = { 1: schemas.rowRevision1, 2: schemas.rowRevision2, 3: schemas.rowRevision3 };

/** A document of any schema the generator lists under components. */
function componentSchemas(revision: Revision): Record<string, Schema> {
  return {
    Root: schemas.root,
    Version: schemas.version,
    ResourceList: schemas.resourceList,
    InstanceMetadata: schemas.instanceMetadata,
    TableLayout: schemas.tableLayout,
    Row: ROW_SCHEMA[revision],
    RowInput: rowInput(revision),
    Targets: schemas.targets,
    Deleted: schemas.deleted,
    EntityIdConversion: schemas.entityIdConversion,
    TableSplits: SPLITS_SCHEMA as unknown as Schema,
    Error: schemas.error,
    OpenApiDocument: { type: 'object', properties: { openapi: { type: 'string', pattern: '^3\\.1\\.' } }, required: ['openapi', 'info', 'paths'] },
  };
}

interface Operation {
  readonly operationId: string;
  readonly summary: string;
  /** Component schema of the 200 body. */
  readonly result: string;
  readonly body?: boolean;
  readonly stream?: boolean;
  /** Statuses beyond the common 400/401/403/404/405/414/500. */
  readonly errors?: readonly number[];
}

const TABLE = '/v1/instances/:instance/tables/:table';

/** Every route of every revision, described; the generator refuses a route missing here. */
const OPERATIONS: Record<string, Operation> = {
  'GET /v1': { operationId: 'getRoot', summary: 'The service and its top-level resources', result: 'Root' },
  'GET /v1/version': { operationId: 'getVersion', summary: 'Versions of the interface, data format and software', result: 'Version' },
  'GET /v1/openapi.json': { operationId: 'getOpenApi', summary: 'This document: OpenAPI 3.1 of the served revision', result: 'OpenApiDocument' },
  'GET /v1/instances': { operationId: 'getInstances', summary: 'Visible instances', result: 'ResourceList' },
  'GET /v1/instances/:instance': { operationId: 'getInstance', summary: "An instance's metadata (MetadataBackup shape)", result: 'InstanceMetadata' },
  'GET /v1/instances/:instance/tables': { operationId: 'getTables', summary: 'Tables of an instance', result: 'ResourceList' },
  [`GET ${TABLE}`]: { operationId: 'getTable', summary: "A table's layout (Avro JSON TableLayoutDesc)", result: 'TableLayout' },
  [`GET ${TABLE}/rows`]: {
    operationId: 'getRows',
    summary:
      'Rows: a point get (eid), a bulk get (eids), a wildcard scan, or a range scan; CR LF framed row documents (Accept: application/x-ndjson for LF framing, application/avro for an Avro object container file); a complete scan ends with the trailers X-Rowgate-Rows and, when limit stopped it early, X-Rowgate-Next-Start',
    result: 'Row',
    stream: true,
    // 406: an Accept naming none of application/json, application/x-ndjson, application/avro.
    errors: [406, 503],
  },
  [`POST ${TABLE}/rows`]: {
    operationId: 'postRows',
    summary: 'Write one row or an array of rows, validated completely first',
    result: 'Targets',
    body: true,
    errors: [413, 415],
  },
  [`GET ${TABLE}/splits`]: {
    operationId: 'getSplits',
    summary:
      "Split points: up to n contiguous row-key ranges covering the table, balanced by estimated size, as start/end values of the revision's range parameters (null = open), for parallel exports",
    result: 'TableSplits',
  },
  [`DELETE ${TABLE}/rows`]: {
    operationId: 'deleteRows',
    summary: 'Delete rows, families, columns, or versions up to a timestamp',
    result: 'Deleted',
  },
  [`GET ${TABLE}/entityId`]: {
    operationId: 'getEntityId',
    summary: 'The hex row key of an entity id in the shell form',
    result: 'EntityIdConversion',
  },
  [`GET ${TABLE}/rows/:hexEntityId`]: { operationId: 'getRow', summary: 'One row as a plain JSON document', result: 'Row' },
  [`PUT ${TABLE}/rows/:hexEntityId`]: {
    operationId: 'putRow',
    summary: "Write cells given as query parameters; answers with the row's written columns",
    result: 'Row',
  },
};

const COMMON_ERRORS = [400, 401, 403, 404, 405, 414, 500];

/** Headers some errors carry (respond.errorHeaders). */
const ERROR_HEADERS: Record<number, Json> = {
  401: { 'WWW-Authenticate': { description: 'Bearer challenge (tokens are configured)', schema: { type: 'string' } } },
  503: { 'Retry-After': { description: 'Seconds to wait before retrying', schema: { type: 'string' } } },
};

function errorDescription(status: number): string {
  const codes = Object.entries(ERRORS)
    .filter(([, spec]) => spec.status === status)
    .map(([code]) => code);
  return codes.length === 0 ? 'Error' : codes.join(', ');
}

function operationOf(route: Route): Json {
  const op = OPERATIONS[`${route.method} ${route.path}`];
  if (!op) throw new Error(`openapi.ts describes no operation for ${route.method} ${route.path}`);
  const parameters: Json[] = [];
  for (const name of route.path
    .split('/')
    .filter((s) => s.startsWith(':'))
    .map((s) => s.slice(1))) {
    parameters.push({ name, in: 'path', required: true, description: PATH_PARAMS[name] ?? name, schema: { type: 'string' } });
  }
  for (const name of route.query.names) {
    const p = QUERY_PARAMS[name];
    if (!p) throw new Error(`openapi.ts describes no query parameter ${name}`);
    parameters.push({ name, in: 'query', required: false, description: p.description, schema: p.schema });
  }
  const responses: Json = {};
  const content: Json = { schema: ref(op.result) };
  if (op.stream)
    content['x-rowgate-stream'] = { framing: 'CRLF', description: 'zero or more row documents, each followed by CR LF; zero rows is an empty body' };
  responses['200'] = { description: op.stream ? 'A row stream: each row document followed by CR LF' : 'OK', content: { 'application/json': content } };
  // Every route that reaches the store can meet it unreachable (503) or refusing the gateway (502).
  const storeErrors = route.path.startsWith('/v1/instances') ? [502, 503] : [];
  for (const status of [...new Set([...COMMON_ERRORS, ...storeErrors, ...(op.errors ?? [])])].sort()) {
    const response: Json = { description: errorDescription(status), content: { 'application/json': { schema: ref('Error') } } };
    const headers = ERROR_HEADERS[status];
    if (headers) response.headers = headers;
    responses[String(status)] = response;
  }
  responses.default = { description: 'Any other error', content: { 'application/json': { schema: ref('Error') } } };
  const operation: Json = { operationId: op.operationId, summary: op.summary, parameters, responses };
  if (route.query.further !== undefined) operation.description = `Further query parameters: ${route.query.further}`;
  if (op.body) operation.requestBody = { required: true, content: { 'application/json': { schema: ref('RowInput') } } };
  return operation;
}

/**
 * HEAD of a GET operation (served wherever GET is, RFC 9110 9.3.2): the same parameters, statuses
 * and headers, no body; a scan is not run.
 */
function headOperation(get: Json, stream: boolean): Json {
  const responses: Json = {};
  for (const [status, response] of Object.entries(get.responses as Record<string, Json>)) {
    responses[status] = { description: response.description, ...(response.headers !== undefined && { headers: response.headers }) };
  }
  const id = String(get.operationId);
  return {
    operationId: `head${id.charAt(0).toUpperCase()}${id.slice(1)}`,
    summary: `GET's status and headers without the body${stream ? ' (the scan is not run)' : ''}: ${String(get.summary)}`,
    parameters: get.parameters,
    responses,
  };
}

/** `/v1/instances/:instance` -> `/v1/instances/{instance}`. */
const openApiPath = (path: string): string => path.replace(/:(\w+)/g, '{$1}');

export function buildOpenApi(revision: Revision): Json {
  const paths: Record<string, Json> = {};
  for (const route of routesFor(revision)) {
    const path = openApiPath(route.path);
    const operation = operationOf(route);
    paths[path] = { ...paths[path], [route.method.toLowerCase()]: operation };
    if (route.method === 'GET') paths[path] = { ...paths[path], head: headOperation(operation, OPERATIONS[`GET ${route.path}`]?.stream === true) };
  }
  return {
    openapi: '3.1.0',
    jsonSchemaDialect: 'https://json-schema.org/draft/2020-12/schema',
    info: {
      title: `rowgate: KijiREST revision ${revision}`,
      version: REST_VERSION,
      description: `The KijiREST interface, revision ${revision}, as served by rowgate. Every error is a JSON body with exceptionName, exception, status and a stable RG_ERR_* code.`,
      license: { name: 'Apache-2.0', identifier: 'Apache-2.0' },
    },
    paths,
    components: {
      schemas: componentSchemas(revision),
      securitySchemes: { bearer: { type: 'http', scheme: 'bearer', description: 'Only when tokens are configured; otherwise the gateway is open' } },
    },
    security: [{}, { bearer: [] }],
  };
}

const cache = new Map<Revision, string>();

/** The document as JSON text, built once per revision. */
export function openApiText(revision: Revision): string {
  let text = cache.get(revision);
  if (text === undefined) {
    text = JSON.stringify(buildOpenApi(revision));
    cache.set(revision, text);
  }
  return text;
}
