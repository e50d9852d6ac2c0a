/**
 * POST rows: one row or an array, every cell validated and encoded before anything is written,
 * then one store write (atomic on the embedded store). The rows wait packed (RowBatch) and the
 * targets compactly (PostTargets): a POST holds about its body's size, not objects per row.
 * DELETE rows: rows, families, columns, or versions up to a timestamp.
 */
import { isRowgateError, rgError, RowgateError } from '../../errors.js';
import { parseColumns } from '../../model/read/columns-param.js';
import { RowBatch } from '../../model/cells/row-batch.js';
import { encodeRowInput, encodeRowInputCached, type RowInputContext } from '../../model/cells/row-input.js';
import { resolveEntityId } from '../../model/keys/entity-id.js';
import type { EntityIdInput, RowWrite, Timestamp } from '../../model/types.js';
import { MAX_TIMESTAMP, timestampFromText } from '../../model/cells/timestamp.js';
import type { RowDelete } from '../../store/store.js';
import { checkBodyHead, jsonBodyItems } from '../body.js';
import { tableLayout, type AppContext, type Handler, type Params, type RequestInfo } from '../context.js';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { dialectOf, rowsPath } from '../../rows/dialect.js';
import { bulkKeys, storableKey } from '../../rows/request-keys.js';
import { PostTargets } from '../post-targets.js';
import { sendJson, sendJsonPieces } from '../respond.js';
import { writeBatch } from '../write-batch.js';
import { writeBudgetOf, type WriteLease } from '../write-budget.js';

/** Prefixes a coded error's message with where in the body it happened; the original is its cause, its code and headers kept. */
function at(where: string, e: unknown): unknown {
  if (!isRowgateError(e)) return e;
  const placed = new RowgateError(e.code, `${where}: ${e.message}`, { cause: e });
  if (e.headers !== undefined) placed.headers = e.headers;
  return placed;
}

export const postRows: Handler = async (ctx, req, res, params, _query, info) => {
  const { bodyBytes } = ctx.config.limits;
  // 415 and a declared 413 come before any store call (limits are enforced before work is done).
  checkBodyHead(req, bodyBytes);
  // The body's bytes are held against limits.writeBudgetBytes from now until the commit: a declared
  // length at once (a 503 before anything is read), a chunked body as it arrives.
  const lease = writeBudgetOf(ctx).lease(ctx.config.limits.writeBudgetBytes);
  try {
    const declared = Number(req.headers['content-length']);
    if (declared > 0) lease.take(declared);
    await postLeased(ctx, req, res, params, info, lease, declared > 0);
  } finally {
    lease.release();
  }
};

/** The POST once its lease is taken (whole from a declared length, else chunk by chunk here). */
async function postLeased(
  ctx: AppContext,
  req: IncomingMessage,
  res: ServerResponse,
  params: Params,
  info: RequestInfo,
  lease: WriteLease,
  leasedWhole: boolean,
): Promise<void> {
  const dialect = dialectOf(ctx.config.revision);
  const { bodyBytes, maxPostCells } = ctx.config.limits;
  const instance = params.instance!;
  const layout = await tableLayout(ctx, params);
  const input: RowInputContext = {
    layout,
    schemas: await ctx.store.schemaTable(instance),
    ...dialect.rowInput,
    readEntityId: dialect.bodyEntityId,
    maxRowKeyBytes: ctx.store.maxRowKeyBytes,
  };
  const batch = new RowBatch();
  const targets = new PostTargets(rowsPath(instance, layout.name));
  let index = 0;
  /**
   * The first row refused. The rest of the body is still read, as JSON only: a body that is not
   * JSON as a whole (or is over the size limit) is refused as such, whichever row came first, so
   * the answer does not depend on how the body was cut into chunks (`{}garbage` answered
   * RG_ERR_BAD_BODY with a Content-Length and RG_ERR_BAD_ENTITY_ID sent a byte a chunk: fuzz).
   */
  let refused: unknown;
  for await (const item of jsonBodyItems(req, bodyBytes, leasedWhole ? undefined : (n) => lease.take(n))) {
    if (refused !== undefined) continue;
    try {
      let encoded: { row: RowWrite; entityId: EntityIdInput };
      try {
        // Synchronous once the caches are warm: no promise per row.
        encoded = encodeRowInputCached(item, input) ?? (await encodeRowInput(item, input));
      } catch (e) {
        throw at(`row ${index}`, e);
      }
      const { row, entityId } = encoded;
      if (batch.cells + row.cells.length > maxPostCells) {
        throw rgError(
          'RG_ERR_TOO_MANY_CELLS',
          `request body holds more than ${maxPostCells} cells (limits.maxPostCells), the limit reached at row ${index}: split it into several POSTs`,
        );
      }
      batch.add(row);
      targets.add(dialect.target(instance, layout.name, entityId, row.rowKey, layout.keyFormat));
      index++;
    } catch (e) {
      refused = e;
      batch.clear();
    }
  }
  if (refused !== undefined) throw refused;
  await writeBatch(ctx.store, instance, params.table!, batch);
  info.rows = batch.rows;
  if (targets.small) sendJson(ctx, req, res, 200, [...targets.pieces()].join(''));
  else sendJsonPieces(ctx, req, res, 200, targets.byteLength(), targets.pieces());
}

export const deleteRows: Handler = async (ctx, req, res, params, query, info) => {
  const dialect = dialectOf(ctx.config.revision);
  const layout = await tableLayout(ctx, params);
  const eid = query.get('eid');
  const eids = query.get('eids');
  if ((eid === undefined) === (eids === undefined)) {
    throw rgError(
      'RG_ERR_AMBIGUOUS_REQUEST',
      eid === undefined ? 'Ambiguous request: give eid or eids to say which rows to delete' : 'Ambiguous request: give eid or eids, not both',
    );
  }
  let keys: Buffer[];
  if (eid !== undefined) {
    keys = [storableKey(resolveEntityId(layout.keyFormat, dialect.parseEid(eid, layout.keyFormat, false)), ctx.store.maxRowKeyBytes, 'eid')];
  } else {
    keys = bulkKeys(eids!, layout, dialect, ctx.config.limits.maxEids, ctx.store.maxRowKeyBytes);
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

function parseDeleteTimestamp(text: string | undefined): Timestamp | undefined {
  if (text === undefined) return undefined;
  const timestamp = timestampFromText(text);
  if (timestamp === undefined)
    throw rgError('RG_ERR_BAD_TIMESTAMP', `timestamp must be an integer of milliseconds from 0 to ${MAX_TIMESTAMP}, got ${JSON.stringify(text)}`);
  return timestamp;
}
