/**
 * Precompiled serializers (fast-json-stringify) for the fixed-shape responses. Rows are not here:
 * their values are already JSON text and are assembled by row-format.ts. The schemas double as
 * the documentation of each response shape.
 */
import fastJson, { type Schema } from 'fast-json-stringify';

const resourceList: Schema = {
  type: 'array',
  items: { type: 'object', properties: { name: { type: 'string' }, uri: { type: 'string' } }, required: ['name', 'uri'] },
};

export const schemas: Record<string, Schema> = {
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
    properties: { rowKey: { type: 'string' } },
    required: ['rowKey'],
  },
};

export const serialize = {
  root: fastJson(schemas.root!),
  version: fastJson(schemas.version!),
  resourceList: fastJson(schemas.resourceList!),
  targets: fastJson(schemas.targets!),
  entityIdConversion: fastJson(schemas.entityIdConversion!),
};
