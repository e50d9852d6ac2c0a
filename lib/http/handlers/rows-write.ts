/**
 * POST rows: one row or an array, every cell validated and encoded before anything is written,
 * then one store write (atomic on the embedded store). DELETE rows: rows, families, columns,
 * or versions up to a timestamp.
 */
import { isRowgateError, rgError, RowgateError } from '../../errors.js';
import { encodeCell } from '../../model/cell-codec.js';
import { formatShellEntityId, resolveEntityId } from '../../model/entity-id.js';
import { parseExactJson } from '../../model/exact-json.js';
import type { EncodedCell, JsonValue, RowWrite, SchemaTable, TableLayout } from '../../model/types.js';
import type { RowDelete } from '../../store/store.js';
import { jsonBodyItems } from '../body.js';
import { tableLayout, type Handler } from '../context.js';
import { dialectOf, type Dialect } from '../dialect.js';
import { allowOnly } from '../query.js';
import { sendJson } from '../respond.js';
import { serialize } from '../serializers.js';

const NONE = new Set<string>();
const ROW_KEYS = new Set(['entityId', 'cells']);
const CELL_KEYS = new Set(['value', 'timestamp', 'writer_schema']);

const isObject = (v: JsonValue | undefined): v is { [k: string]: JsonValue } => typeof v === 'object' && v !== null && !Array.isArray(v) && typeof v !== 'bigint';

/** Prefixes a coded error's message with where in the body it happened. */
function at(where: string, e: unknown): unknown {
  return isRowgateError(e) ? new RowgateError(e.code, `${where}: ${e.message}`) : e;
}

export const postRows: Handler = async (ctx, req, res, params, query, info) => {
  const dialect = dialectOf(ctx.config.revision);
  allowOnly(query, NONE, ctx.config.revision);
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
  sendJson(res, 200, serialize.targets({ targets }));
};

async function encodeRow(dialect: Dialect, layout: TableLayout, schemas: SchemaTable, instance: string, item: JsonValue): Promise<{ row: RowWrite; target: string }> {
  if (!isObject(item)) throw rgError('RG_ERR_BAD_BODY', 'a row must be a JSON object with entityId and cells');
  for (const k of Object.keys(item)) if (!ROW_KEYS.has(k)) throw rgError('RG_ERR_BAD_BODY', `unknown row field ${JSON.stringify(k)} (a row has entityId and cells)`);
  const input = dialect.bodyEntityId(item.entityId, layout.keyFormat);
  const rowKey = resolveEntityId(layout.keyFormat, input);
  const cells: EncodedCell[] = [];
  const families = item.cells ?? {};
  if (!isObject(families)) throw rgError('RG_ERR_BAD_BODY', 'cells must be an object mapping family to qualifier to a list of cells');
  for (const [family, qualifiers] of Object.entries(families)) {
    if (!isObject(qualifiers)) throw rgError('RG_ERR_BAD_BODY', `cells.${family} must be an object mapping qualifier to a list of cells`);
    for (const [qualifier, list] of Object.entries(qualifiers)) {
      if (!Array.isArray(list)) throw rgError('RG_ERR_BAD_BODY', `cells.${family}.${qualifier} must be a list of cells`);
      for (const cell of list) {
        if (!isObject(cell) || !('value' in cell)) throw rgError('RG_ERR_BAD_BODY', `each cell of ${family}:${qualifier} must be an object with a value`);
        for (const k of Object.keys(cell)) if (!CELL_KEYS.has(k)) throw rgError('RG_ERR_BAD_BODY', `unknown cell field ${JSON.stringify(k)} in ${family}:${qualifier} (a cell has value, timestamp, writer_schema)`);
        if (dialect.revision === 1 && cell.writer_schema !== undefined) {
          throw rgError('RG_ERR_BAD_PARAMETER', `writer_schema is not part of revision 1 (the server speaks revision 1; the column's layout schema is used)`);
        }
        cells.push(await encodeCell({ layout, family, qualifier, timestamp: cell.timestamp, value: cell.value!, writerSchema: cell.writer_schema, schemas, revision: dialect.revision }));
      }
    }
  }
  const target = dialect.target(instance, layout.name, input, rowKey, dialect.revision === 3 ? '' : formatShellEntityId(layout.keyFormat, rowKey));
  return { row: { rowKey, cells }, target };
}

export const deleteRows: Handler = async (ctx, _req, res, params, query, info) => {
  const dialect = dialectOf(ctx.config.revision);
  allowOnly(query, new Set(['eid', 'eids', 'cols', 'timestamp']), ctx.config.revision);
  const layout = await tableLayout(ctx, params);
  const eid = query.get('eid');
  const eids = query.get('eids');
  if ((eid === undefined) === (eids === undefined)) {
    throw rgError('RG_ERR_AMBIGUOUS_REQUEST', eid === undefined ? 'Ambiguous request: give eid or eids to say which rows to delete' : 'Ambiguous request: give eid or eids, not both');
  }
  let keys: Buffer[];
  if (eid !== undefined) {
    keys = [resolveEntityId(layout.keyFormat, dialect.parseEid(eid, layout.keyFormat, false))];
  } else {
    const list = parseExactJson(eids!, 'eids');
    if (!Array.isArray(list)) throw rgError('RG_ERR_BAD_ENTITY_ID', 'eids must be a JSON array of entity ids');
    if (list.length > ctx.config.limits.maxEids) throw rgError('RG_ERR_BAD_PARAMETER', `eids has ${list.length} entity ids; at most ${ctx.config.limits.maxEids} are allowed per request`);
    keys = list.map((item) => resolveEntityId(layout.keyFormat, dialect.bulkItem(item, layout.keyFormat)));
  }
  const upToTimestamp = parseDeleteTimestamp(query.get('timestamp'));
  const columns = parseDeleteColumns(layout, query.get('cols'));
  const deletes: RowDelete[] = [];
  for (const rowKey of keys) {
    if (columns === undefined) deletes.push({ rowKey, upToTimestamp });
    else for (const c of columns) deletes.push({ rowKey, family: c.family, qualifier: c.qualifier, upToTimestamp });
  }
  await ctx.store.delete(params.instance!, params.table!, deletes);
  info.rows = keys.length;
  sendJson(res, 200, 'true');
};

function parseDeleteTimestamp(text: string | undefined): number | undefined {
  if (text === undefined) return undefined;
  if (!/^\d{1,16}$/.test(text) || !Number.isSafeInteger(Number(text))) {
    throw rgError('RG_ERR_BAD_TIMESTAMP', `timestamp must be a non-negative integer of milliseconds, got ${JSON.stringify(text)}`);
  }
  return Number(text);
}

/** undefined = the whole row (`*` or absent). */
function parseDeleteColumns(layout: TableLayout, text: string | undefined): { family: string; qualifier?: string }[] | undefined {
  if (text === undefined || text.trim() === '*') return undefined;
  return text.split(',').map((item) => {
    const name = item.trim();
    const colon = name.indexOf(':');
    const family = colon < 0 ? name : name.slice(0, colon);
    const qualifier = colon < 0 || colon === name.length - 1 ? undefined : name.slice(colon + 1);
    const fam = layout.families.get(family);
    if (!fam) throw rgError('RG_ERR_BAD_COLUMNS', `cols names unknown family ${JSON.stringify(family)} of table ${layout.name}`);
    if (qualifier !== undefined && !fam.mapSchema && !fam.columns.some((c) => c.name === qualifier)) {
      throw rgError('RG_ERR_BAD_COLUMNS', `cols names unknown column ${family}:${qualifier} of table ${layout.name}`);
    }
    return { family, qualifier };
  });
}
