/**
 * The OpenAPI 3.1 document of the served revision (`GET /v1/openapi.json`), built from the
 * revision's route table (routes.ts: each entry's path, parameters, summary, result and errors)
 * with the response shapes the serializers compile (serializers.ts), so the document cannot drift
 * from what is served: a parameter without a description here makes the generator throw, and
 * test/routes/openapi.test.ts validates real responses of every endpoint against the document. The
 * server builds it from the table it routes with and hands it to the handler of the route.
 *
 * Row streams (GET rows) are `application/json` bodies holding a sequence of row documents, each
 * followed by CR LF (docs/interface.md, "The row stream"). OpenAPI 3.1 has no keyword for such a sequence, so the schema
 * given is the one every framed document satisfies, and the extension `x-rowgate-stream` says so.
 */
import type { Revision } from '../config/config.js';
import { ERRORS } from '../errors.js';
import { REST_VERSION } from '../version.js';
import { dialectOf } from '../rows/dialect.js';
import type { Route } from './routes.js';
import { schemas, type ResultShape, type Schema } from './serializers.js';

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
      timestamp: {
        anyOf: [{ type: 'number', minimum: 0 }, { const: -1 }, { type: 'string', pattern: '^[0-9]{1,19}$' }, { type: 'null' }],
        description:
          "Milliseconds from 0 to 2^63-1, as KijiREST's Jackson took them: a fraction is dropped, a string of digits read as the number; null or absent: the server's time; -1 skips the cell (as KijiREST did), the rest of the row is written",
      },
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

/** The 200 bodies of the revision's routes, by the name a route entry gives as its result. */
function resultSchemas(revision: Revision): Record<ResultShape, Schema> {
  return {
    root: schemas.root,
    version: schemas.version,
    resourceList: schemas.resourceList,
    instanceMetadata: schemas.instanceMetadata,
    tableLayout: schemas.tableLayout,
    row: ROW_SCHEMA[revision],
    targets: schemas.targets,
    deleted: schemas.deleted,
    entityIdConversion: schemas.entityIdConversion,
    tableSplits: schemas.tableSplits,
    openApiDocument: schemas.openApiDocument,
  };
}

/** A result's name among the components: `row` -> `Row`. */
const componentName = (result: string): string => result.charAt(0).toUpperCase() + result.slice(1);

/** A document of any schema the generator lists under components. */
function componentSchemas(revision: Revision): Record<string, Schema> {
  const components: Record<string, Schema> = {};
  for (const [result, schema] of Object.entries(resultSchemas(revision))) components[componentName(result)] = schema;
  return { ...components, RowInput: rowInput(revision), Error: schemas.error };
}

/** Statuses of the errors a route can answer. */
function errorStatuses(route: Route): number[] {
  return [...new Set(route.errors.map((code) => ERRORS[code].status))].sort((a, b) => a - b);
}

/** Headers some errors carry (respond.errorHeaders). */
const ERROR_HEADERS: Record<number, Json> = {
  401: { 'WWW-Authenticate': { description: 'Bearer challenge (tokens are configured)', schema: { type: 'string' } } },
  503: { 'Retry-After': { description: 'Seconds to wait before retrying', schema: { type: 'string' } } },
};

/** The codes of `status` that this route can answer (routes.ts declares them), not every code of the status. */
function errorDescription(route: Route, status: number): string {
  const codes = [...new Set(route.errors.filter((code) => ERRORS[code].status === status))];
  return codes.length === 0 ? 'Error' : codes.join(', ');
}

function operationOf(route: Route): Json {
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
  const content: Json = { schema: ref(componentName(route.result)) };
  if (route.stream)
    content['x-rowgate-stream'] = { framing: 'CRLF', description: 'zero or more row documents, each followed by CR LF; zero rows is an empty body' };
  responses['200'] = { description: route.stream ? 'A row stream: each row document followed by CR LF' : 'OK', content: { 'application/json': content } };
  for (const status of errorStatuses(route)) {
    const response: Json = { description: errorDescription(route, status), content: { 'application/json': { schema: ref('Error') } } };
    const headers = ERROR_HEADERS[status];
    if (headers) response.headers = headers;
    responses[String(status)] = response;
  }
  responses.default = { description: 'Any other error', content: { 'application/json': { schema: ref('Error') } } };
  const operation: Json = { operationId: route.operationId, summary: route.summary, parameters, responses };
  if (route.query.further !== undefined) operation.description = `Further query parameters: ${route.query.further}`;
  if (route.body) operation.requestBody = { required: true, content: { 'application/json': { schema: ref('RowInput') } } };
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

/** The document of `routes`, the route table of `revision` (routes.ts routesFor). */
function buildOpenApi(revision: Revision, routes: readonly Route[]): Json {
  const paths: Record<string, Json> = {};
  for (const route of routes) {
    const path = openApiPath(route.path);
    const operation = operationOf(route);
    paths[path] = { ...paths[path], [route.method.toLowerCase()]: operation };
    if (route.method === 'GET') paths[path] = { ...paths[path], head: headOperation(operation, route.stream === true) };
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

/** The document as JSON text. */
export function openApiText(revision: Revision, routes: readonly Route[]): string {
  return JSON.stringify(buildOpenApi(revision, routes));
}
