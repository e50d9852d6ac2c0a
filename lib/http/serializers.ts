/**
 * Precompiled serializers (fast-json-stringify) for the fixed-shape responses. Rows are not
 * serialized here: their values are already JSON text and are assembled by row-format.ts; their
 * schemas (one per revision) are here all the same. The schemas double as the documentation of
 * each response shape: lib/http/openapi.ts builds the OpenAPI document from them.
 */
import fastJson, { type Schema as StringifySchema } from 'fast-json-stringify';

/** A JSON Schema (2020-12 subset understood by fast-json-stringify and by ajv). */
export type Schema = { readonly [keyword: string]: unknown };

const compile = (schema: Schema) => fastJson(schema as unknown as StringifySchema);

const resourceList: Schema = {
  type: 'array',
  items: { type: 'object', properties: { name: { type: 'string' }, uri: { type: 'string' } }, required: ['name', 'uri'] },
};

const baseSchemas = {
  root: {
    type: 'object',
    properties: { resources: { type: 'array', items: { type: 'string' } }, service: { type: 'string' } },
    required: ['resources', 'service'],
  },
  version: {
    type: 'object',
    properties: {
      'service-client-data-version': {
        type: 'object',
        properties: {
          majorVersion: { type: 'integer' },
          minorVersion: { type: 'integer' },
          revision: { type: 'integer' },
          protocolName: { type: 'string' },
        },
        required: ['majorVersion', 'minorVersion', 'revision', 'protocolName'],
      },
      'rest-version': { type: 'string' },
      'service-software-version': { type: 'string' },
    },
    required: ['service-client-data-version', 'rest-version', 'service-software-version'],
  },
  resourceList,
  targets: {
    type: 'object',
    properties: { targets: { type: 'array', items: { type: 'string' } } },
    required: ['targets'],
  },
  entityIdConversion: {
    type: 'object',
    properties: { rowKey: { type: 'string', pattern: '^[0-9a-f]*$' } },
    required: ['rowKey'],
  },
} satisfies Record<string, Schema>;

/** Any JSON value (an Avro JSON cell value, a layout). */
const anyValue: Schema = {};

/** A layout in the Avro JSON encoding (TableLayoutDesc), served as stored. */
const tableLayout: Schema = { type: 'object', additionalProperties: true, required: ['name', 'keys_format', 'locality_groups', 'version'] };

/** The cells of a row: family -> qualifier -> versions, newest first. */
function rowCells(withSchema: boolean): Schema {
  const cell: Schema = {
    type: 'object',
    properties: {
      timestamp: { type: 'integer', minimum: 0 },
      value: anyValue,
      ...(withSchema ? { writer_schema: { type: 'integer', minimum: 0 } } : {}),
    },
    required: withSchema ? ['timestamp', 'value', 'writer_schema'] : ['timestamp', 'value'],
    additionalProperties: false,
  };
  return {
    type: 'object',
    additionalProperties: { type: 'object', additionalProperties: { type: 'array', items: cell } },
  };
}

/** Revision 3 entity ids: the components as a JSON array, or `rowkey=<escaped>` for keys without components. */
const entityIdRevision3: Schema = {
  anyOf: [
    { type: 'array', items: { type: ['string', 'integer', 'null'] } },
    { type: 'string', pattern: '^rowkey=' },
  ],
};

function row(entityId: Schema, withSchema: boolean): Schema {
  return {
    type: 'object',
    properties: { entityId, cells: rowCells(withSchema) },
    required: ['entityId', 'cells'],
    additionalProperties: false,
  };
}

/** Revisions 1 and 2: the entity id in the shell form, e.g. `[12345]` or `['a', 'b']`. */
const shellEntityId: Schema = { type: 'string' };

export const schemas = {
  ...baseSchemas,
  /** Every error response (docs/errors.md). */
  error: {
    type: 'object',
    properties: {
      exceptionName: { type: 'string' },
      exception: { type: 'string' },
      status: { type: 'integer', minimum: 400, maximum: 599 },
      code: { type: 'string', pattern: '^RG_ERR_[A-Z_]+$' },
    },
    required: ['exceptionName', 'exception', 'status', 'code'],
    additionalProperties: false,
  },
  /** GET /v1/instances/<instance>: the shape of the original's MetadataBackup. */
  instanceMetadata: {
    type: 'object',
    properties: {
      layout_version: { type: 'string' },
      system_table: {
        type: 'object',
        properties: {
          entries: {
            type: 'array',
            items: { type: 'object', properties: { key: { type: 'string' }, value: { type: 'string' } }, required: ['key', 'value'] },
          },
        },
        required: ['entries'],
      },
      schema_table: {
        type: 'object',
        properties: {
          entries: {
            type: 'array',
            items: {
              type: 'object',
              properties: { id: { type: 'integer', minimum: 0 }, hash: { type: 'string' }, avro_schema: { type: 'string' } },
              required: ['id', 'hash', 'avro_schema'],
            },
          },
        },
        required: ['entries'],
      },
      meta_table: {
        type: 'object',
        properties: {
          tables: {
            type: 'object',
            additionalProperties: {
              type: 'object',
              properties: {
                name: { type: 'string' },
                table_layouts_backup: {
                  type: 'object',
                  properties: {
                    layouts: { type: 'array', items: { type: 'object', properties: { layout: tableLayout }, required: ['layout'] } },
                  },
                  required: ['layouts'],
                },
                key_value_backup: {
                  type: 'object',
                  properties: { key_values: { type: 'array', items: anyValue } },
                  required: ['key_values'],
                },
              },
              required: ['name', 'table_layouts_backup', 'key_value_backup'],
            },
          },
        },
        required: ['tables'],
      },
    },
    required: ['layout_version', 'system_table', 'schema_table', 'meta_table'],
  },
  tableLayout,
  /** DELETE rows answers `true`. */
  deleted: { type: 'boolean', const: true },
  /** GET splits (handlers/splits.ts splitsBody). */
  tableSplits: {
    type: 'object',
    properties: {
      start_param: { type: 'string', description: 'The range parameter a start bound is given as' },
      end_param: { type: 'string', description: 'The range parameter an end bound is given as' },
      splits: {
        type: 'array',
        minItems: 1,
        items: {
          type: 'object',
          properties: {
            start: { type: ['string', 'null'], description: 'Inclusive start; null = from the first row' },
            end: { type: ['string', 'null'], description: 'Exclusive end; null = past the last row' },
            estimated_rows: { type: ['integer', 'null'], minimum: 0, description: 'Estimated rows (null where the store gives none: Bigtable)' },
            estimated_bytes: { type: 'integer', minimum: 0, description: 'Estimated stored bytes' },
          },
          required: ['start', 'end', 'estimated_rows', 'estimated_bytes'],
          additionalProperties: false,
        },
      },
    },
    required: ['start_param', 'end_param', 'splits'],
    additionalProperties: false,
  },
  /** GET /v1/openapi.json (lib/http/openapi.ts). */
  openApiDocument: { type: 'object', properties: { openapi: { type: 'string', pattern: '^3\\.1\\.' } }, required: ['openapi', 'info', 'paths'] },
  /** One row document of the row stream (and revision 1's single-row resource), per revision. */
  rowRevision1: row(shellEntityId, false),
  rowRevision2: row(shellEntityId, true),
  rowRevision3: row(entityIdRevision3, true),
};

/**
 * The 200 bodies of the routes, by name: a route entry's `result` (routes.ts). Each is a schema
 * above, `row` being the served revision's row document (rowRevision1-3). The OpenAPI document
 * lists them under components, capitalized (`row` -> `Row`).
 */
export type ResultShape =
  | 'root'
  | 'version'
  | 'resourceList'
  | 'instanceMetadata'
  | 'tableLayout'
  | 'row'
  | 'targets'
  | 'deleted'
  | 'entityIdConversion'
  | 'tableSplits'
  | 'openApiDocument';

export const serialize = {
  root: compile(schemas.root),
  version: compile(schemas.version),
  resourceList: compile(schemas.resourceList),
  // POST targets are written by post-targets.ts (in pieces); their schema stays for the OpenAPI document.
  entityIdConversion: compile(schemas.entityIdConversion),
  error: compile(schemas.error),
  instanceMetadata: compile(schemas.instanceMetadata),
};
