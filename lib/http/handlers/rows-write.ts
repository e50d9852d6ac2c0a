/**
 * POST rows: one row or an array, every cell validated and encoded before anything is written,
 * then one store write (atomic on the embedded store). DELETE rows: rows, families, columns,
 * or versions up to a timestamp.
 */
import { isRowgateError, rgError, RowgateError } from '../../errors.js';
import { parseColumns } from '../../model/columns-param.js';
import { encodeRowInput } from '../../model/row-input.js';
import { formatShellEntityId, resolveEntityId } from '../../model/entity-id.js';
import type { JsonValue, RowWrite, SchemaTable, TableLayout } from '../../model/types.js';
import type { RowDelete } from '../../store/store.js';
import { checkBodyHead, jsonBodyItems } from '../body.js';
import { bulkKeys } from './rows-read.js';
import { tableLayout, type Handler } from '../context.js';
import { dialectOf, storableKey, type Dialect } from '../dialect.js';
import { allowOnly } from '../query.js';
import { sendJson } from '../respond.js';
import { serialize } from '../serializers.js';

const NONE = new Set<string>();
/** The parameters of DELETE rows. */
export const DELETE_PARAMS: ReadonlySet<string> = new Set(['eid', 'eids', 'cols', 'timestamp']);


/** Prefixes a coded error's message with where in the body it happened. */
function at(where: string, e: unknown): unknown {
  return isRowgateError(e) ? new RowgateError(e.code, `${where}: ${e.message}`) : e;
}

export const postRows: Handler = async (ctx, req, res, params, query, info) => {
  const dialect = dialectOf(ctx.config.revision);
  allowOnly(query, NONE, ctx.config.revision);
  // 415 and a declared 413 come before any store call (limits are enforced before work is done).
  checkBodyHead(req, ctx.config.limits.bodyBytes);
  const layout = await tableLayout(ctx, params);
  const schemas = await ctx.store.schemaTable(params.instance!);
  const rows: RowWrite[] = [];
  const targets: string[] = [];
  let index = 0;
  for await (const item of jsonBodyItems(req, ctx.config.limits.bodyBytes)) {
    try {
      const { row, target } = await encodeRow(dialect, layout, schemas, params.instance!, item);
      rows.push(row);
      targets.push(target);
    } catch (e) {
      throw at(`row ${index}`, e);
    }
    index++;
  }
  await ctx.store.write(params.instance!, params.table!, rows);
  info.rows = rows.length;
  sendJson(ctx, req, res, 200, serialize.targets({ targets }));
};

async function encodeRow(dialect: Dialect, layout: TableLayout, schemas: SchemaTable, instance: string, item: JsonValue): Promise<{ row: RowWrite; target: string }> {
  const { row, entityId } = await encodeRowInput(item, { layout, schemas, revision: dialect.revision, readEntityId: dialect.bodyEntityId });
  const shell = dialect.revision === 3 ? '' : formatShellEntityId(layout.keyFormat, row.rowKey);
  return { row, target: dialect.target(instance, layout.name, entityId, row.rowKey, shell) };
}

export const deleteRows: Handler = async (ctx, req, res, params, query, info) => {
  const dialect = dialectOf(ctx.config.revision);
  allowOnly(query, DELETE_PARAMS, ctx.config.revision);
  const layout = await tableLayout(ctx, params);
  const eid = query.get('eid');
  const eids = query.get('eids');
  if ((eid === undefined) === (eids === undefined)) {
    throw rgError('RG_ERR_AMBIGUOUS_REQUEST', eid === undefined ? 'Ambiguous request: give eid or eids to say which rows to delete' : 'Ambiguous request: give eid or eids, not both');
  }
  let keys: Buffer[];
  if (eid !== undefined) {
    keys = [storableKey(resolveEntityId(layout.keyFormat, dialect.parseEid(eid, layout.keyFormat, false)), ctx.store.maxRowKeyBytes, 'eid')];
  } else {
    keys = bulkKeys(ctx, layout, eids!);
  }
  const upToTimestamp = parseDeleteTimestamp(query.get('timestamp'));
  // The same names as GET's cols (undefined = the whole row), stricter where a DELETE could remove more than meant.
  const columns = parseColumns(layout, query.get('cols'), 'delete');
  const deletes: RowDelete[] = [];
  for (const rowKey of keys) {
    if (columns === undefined) deletes.push({ rowKey, upToTimestamp });
    else for (const c of columns) deletes.push({ rowKey, family: c.family, qualifier: c.qualifier, upToTimestamp });
  }
  await ctx.store.delete(params.instance!, params.table!, deletes);
  info.rows = keys.length;
  sendJson(ctx, req, res, 200, 'true');
};

function parseDeleteTimestamp(text: string | undefined): number | undefined {
  if (text === undefined) return undefined;
  if (!/^\d{1,16}$/.test(text) || !Number.isSafeInteger(Number(text))) {
    throw rgError('RG_ERR_BAD_TIMESTAMP', `timestamp must be a non-negative integer of milliseconds, got ${JSON.stringify(text)}`);
  }
  return Number(text);
}
