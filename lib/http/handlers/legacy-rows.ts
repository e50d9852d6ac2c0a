/**
 * The endpoints only the older revisions have (docs/interface.md, "Routes" and
 * "Revision 1"):
 *
 * - GET `.../entityId?eid=...` (revisions 1 and 2): an entity id in the shell syntax -> `{"rowKey": "<hex>"}`.
 * - GET `.../rows/<hexEntityId>` (revision 1): one row as a plain JSON document (no CR LF frame).
 * - PUT `.../rows/<hexEntityId>` (revision 1): cells given as query parameters; answers with the
 *   row holding the most recent version of each column written.
 */
import type { IncomingMessage } from 'node:http';
import { hasBody } from '../body.js';
import { isRowgateError, rgError } from '../../errors.js';
import { fromHex, toHex } from '../../model/keys/binary-text.js';
import { encodeCell } from '../../model/cells/cell-codec.js';
import { parseShellEntityId, resolveEntityId } from '../../model/keys/entity-id.js';
import { parseExactJson } from '../../model/json/exact-json.js';
import { END_OF_TIME, parseReadSpec } from '../../model/read/read-request.js';
import type { ColumnSelector, EncodedCell, JsonValue, ReadSpec, SchemaTable, TableLayout, Timestamp } from '../../model/types.js';
import { MAX_TIMESTAMP, timestampFromText } from '../../model/cells/timestamp.js';
import { tableLayout, type AppContext, type Handler, type Params } from '../context.js';
import { storableKey } from '../../rows/request-keys.js';
import type { Query } from '../query.js';
import { sendJson } from '../respond.js';
import { rowSerializer } from '../../rows/row-format.js';
import { serialize } from '../serializers.js';

/** GET entityId: the hex row key of an entity id given in the revision 1/2 shell syntax. */
export const getEntityId: Handler = async (ctx, req, res, params, query) => {
  const layout = await tableLayout(ctx, params);
  const eid = query.get('eid');
  if (eid === undefined || eid.trim() === '') {
    throw rgError('RG_ERR_BAD_ENTITY_ID', "Entity ID JSON required: give eid, e.g. eid=[12345] or eid=['a', 'b']");
  }
  const rowKey = resolveEntityId(layout.keyFormat, parseShellEntityId(eid, layout.keyFormat, { allowWildcards: false }));
  sendJson(ctx, req, res, 200, serialize.entityIdConversion({ rowKey: toHex(rowKey) }));
};

/** The row key of the `<hexEntityId>` path segment, checked against the table's key format. */
function pathRowKey(ctx: AppContext, layout: TableLayout, params: Params): Buffer {
  const hex = params.hexEntityId ?? '';
  const rowKey = storableKey(fromHex(hex, 'hexEntityId'), ctx.store.maxRowKeyBytes, 'hexEntityId');
  return resolveEntityId(layout.keyFormat, { kind: 'rowKey', rowKey, text: `hbase=hex:${hex}` });
}

async function sendRow(
  ctx: AppContext,
  req: IncomingMessage,
  res: Parameters<Handler>[2],
  params: Params,
  layout: TableLayout,
  rowKey: Buffer,
  read: ReadSpec,
): Promise<void> {
  const [row] = await ctx.store.get(params.instance!, params.table!, [rowKey], read);
  // One row, as the original's RowResource returned it: a plain JSON entity, not a framed stream.
  sendJson(ctx, req, res, 200, rowSerializer(layout.keyFormat, ctx.config.revision)(row ?? { rowKey, cells: [] }));
}

/** GET one row (revision 1): cols, versions, timerange as for scans; a missing row has `"cells": {}`. */
export const getRow: Handler = async (ctx, req, res, params, query, info) => {
  const layout = await tableLayout(ctx, params);
  const rowKey = pathRowKey(ctx, layout, params);
  const read = parseReadSpec(layout, { cols: query.get('cols'), versions: query.get('versions'), timerange: query.get('timerange') });
  info.rows = 1;
  await sendRow(ctx, req, res, params, layout, rowKey, read);
};

interface PutColumn {
  readonly family: string;
  readonly qualifier: string;
  readonly text: string;
}

const PUT_FORMS = 'timestamp, timestamp.<family:qualifier>, schema.<family:qualifier> or <family:qualifier>';

/** `family:qualifier` split at the first colon; both parts non-empty. */
function columnOf(name: string, param: string): { family: string; qualifier: string } {
  const colon = name.indexOf(':');
  if (colon <= 0 || colon === name.length - 1) {
    throw rgError('RG_ERR_BAD_PARAMETER', `PUT parameter ${JSON.stringify(param)} is not one of ${PUT_FORMS} (the server speaks revision 1)`);
  }
  return { family: name.slice(0, colon), qualifier: name.slice(colon + 1) };
}

function parseMillis(text: string, param: string): Timestamp {
  const timestamp = timestampFromText(text);
  if (timestamp === undefined)
    throw rgError('RG_ERR_BAD_TIMESTAMP', `${param} must be an integer of milliseconds from 0 to ${MAX_TIMESTAMP}, got ${JSON.stringify(text)}`);
  return timestamp;
}

/** JSON text, exact for 64-bit integers (undefined when the text is not JSON). */
function parseJsonText(text: string, what: string): JsonValue | undefined {
  try {
    return parseExactJson(text, what);
  } catch (e) {
    if (isRowgateError(e)) return undefined;
    throw e;
  }
}

function writerSchemaOf(text: string, column: string): JsonValue {
  const schema = parseJsonText(text, `schema.${column}`);
  if (schema === undefined || schema === null || (typeof schema !== 'string' && typeof schema !== 'object')) {
    throw rgError(
      'RG_ERR_BAD_SCHEMA',
      `schema.${column} must be an Avro schema in JSON (e.g. "string" with its quotes, or a record), got ${JSON.stringify(text.slice(0, 200))}`,
    );
  }
  return schema;
}

/**
 * One PUT cell. The value is JSON (a string column takes a JSON string literal). As the original
 * took a string column's value as raw text, text that is not JSON at all is tried as a string.
 */
async function encodePutCell(
  layout: TableLayout,
  schemas: SchemaTable,
  col: PutColumn,
  timestamp: Timestamp,
  writerSchema: JsonValue | undefined,
): Promise<EncodedCell> {
  const args = { layout, family: col.family, qualifier: col.qualifier, timestamp, schemas, writerSchema, writerSchemas: writerSchema !== undefined };
  const value = parseJsonText(col.text, `${col.family}:${col.qualifier}`);
  if (value !== undefined) return encodeCell({ ...args, value });
  try {
    return await encodeCell({ ...args, value: col.text });
  } catch (e) {
    if (isRowgateError(e) && e.code === 'RG_ERR_BAD_VALUE') {
      throw rgError(
        'RG_ERR_BAD_VALUE',
        `value of column ${col.family}:${col.qualifier} is not JSON (raw text is accepted only where the schema takes a string): ${JSON.stringify(col.text.slice(0, 200))}`,
      );
    }
    throw e;
  }
}

/**
 * PUT one row (revision 1). Every input is a query parameter: `timestamp` (required), one or more
 * `<family:qualifier>=<JSON value>`, `timestamp.<family:qualifier>` and `schema.<family:qualifier>`
 * for columns written in the same request. A cell replaces the one at the same column and
 * timestamp, so repeating a PUT changes nothing. All cells are validated before the one atomic write.
 */
export const putRow: Handler = async (ctx, req, res, params, query, info) => {
  if (hasBody(req)) throw rgError('RG_ERR_BAD_BODY', 'PUT takes query parameters only (timestamp and <family:qualifier>=<value>), not a body');
  const layout = await tableLayout(ctx, params);
  const rowKey = pathRowKey(ctx, layout, params);
  const { columns, timestamp, timestamps, schemas: writerSchemas } = parsePutQuery(query);
  const written = new Set(columns.map((c) => `${c.family}:${c.qualifier}`));
  // Overrides for columns not written are refused, so a misspelt column name cannot go unnoticed.
  for (const [kind, map] of [
    ['timestamp', timestamps],
    ['schema', writerSchemas],
  ] as const) {
    for (const column of map.keys()) {
      if (!written.has(column)) throw rgError('RG_ERR_BAD_PARAMETER', `${kind}.${column} is given but column ${column} is not written by this PUT`);
    }
  }
  const schemaTable = await ctx.store.schemaTable(params.instance!);
  const cells: EncodedCell[] = [];
  for (const col of columns) {
    const column = `${col.family}:${col.qualifier}`;
    const schemaText = writerSchemas.get(column);
    const writerSchema = schemaText === undefined ? undefined : writerSchemaOf(schemaText, column);
    cells.push(await encodePutCell(layout, schemaTable, col, timestamps.get(column) ?? timestamp, writerSchema));
  }
  await ctx.store.write(params.instance!, params.table!, [{ rowKey, cells }]);
  info.rows = 1;
  const selected: ColumnSelector[] = [...columns]
    .sort((a, b) => (a.family === b.family ? cmp(a.qualifier, b.qualifier) : cmp(a.family, b.family)))
    .map((c) => ({ family: c.family, qualifier: c.qualifier }));
  await sendRow(ctx, req, res, params, layout, rowKey, { columns: selected, maxVersions: 1, minTimestamp: 0, maxTimestamp: END_OF_TIME });
};

const cmp = (a: string, b: string): number => (a < b ? -1 : a > b ? 1 : 0);

function parsePutQuery(query: Query): { columns: PutColumn[]; timestamp: Timestamp; timestamps: Map<string, Timestamp>; schemas: Map<string, string> } {
  const columns: PutColumn[] = [];
  const timestamps = new Map<string, Timestamp>();
  const schemas = new Map<string, string>();
  let timestamp: Timestamp | undefined;
  for (const [name, text] of query) {
    if (name === 'timestamp') {
      timestamp = parseMillis(text, 'timestamp');
    } else if (name.startsWith('timestamp.')) {
      const { family, qualifier } = columnOf(name.slice('timestamp.'.length), name);
      timestamps.set(`${family}:${qualifier}`, parseMillis(text, name));
    } else if (name.startsWith('schema.')) {
      const { family, qualifier } = columnOf(name.slice('schema.'.length), name);
      schemas.set(`${family}:${qualifier}`, text);
    } else {
      columns.push({ ...columnOf(name, name), text });
    }
  }
  if (timestamp === undefined) {
    throw rgError('RG_ERR_BAD_TIMESTAMP', 'Timestamp is unspecified: PUT requires timestamp=<milliseconds> (so that repeating it creates no new cells)');
  }
  if (columns.length === 0) {
    throw rgError('RG_ERR_BAD_PARAMETER', 'PUT writes no column: give at least one <family:qualifier>=<value>');
  }
  return { columns, timestamp, timestamps, schemas };
}
