/**
 * What differs between the three revisions of the row operations (docs/interface.md, "Revisions"):
 * how entity ids are written in URLs and bodies, the range parameters, and the POST target form.
 * Everything else is shared, so one code base serves all three. Part of lib/rows, the
 * request-to-rows layer the HTTP handlers and the command line (tools/support) both use.
 */
import type { Revision } from '../config/config.js';
import { isRowgateError, rgError } from '../errors.js';
import { fromHex, toHex } from '../model/keys/binary-text.js';
import { entityIdFromBody, formatShellEntityId, parseEntityIdText, parseShellEntityId, resolveEntityId } from '../model/keys/entity-id.js';
import type { EntityIdInput, JsonValue, RowKeyFormat } from '../model/types.js';
import type { RowRenderSpec } from '../store/store.js';

export interface Dialect {
  readonly revision: Revision;
  readonly startParam: string;
  readonly endParam: string;
  readonly scanParams: ReadonlySet<string>;
  /** GET rows takes the freshening parameters (revisions 2 and 3: KijiREST 0.6.0 declared them). */
  readonly freshening: boolean;
  /** What to send instead of the other revisions' range parameters (for the 400 naming one). */
  readonly rangeHints: ReadonlyMap<string, string>;
  /** The `eid` parameter. */
  parseEid(text: string, format: RowKeyFormat, allowWildcards: boolean): EntityIdInput;
  /** A range bound parameter, as a row key. */
  parseBound(text: string, format: RowKeyFormat, name: string): Buffer;
  /** A row key as the range parameters take it (parseBound's inverse). */
  formatBound(rowKey: Buffer): string;
  /** One element of `eids`. */
  bulkItem(item: JsonValue, format: RowKeyFormat): EntityIdInput;
  /** `entityId` of a POSTed row. */
  bodyEntityId(value: JsonValue | undefined, format: RowKeyFormat): EntityIdInput;
  /** Entity ids are JSON arrays of components (revision 3), not shell strings (revisions 1 and 2). */
  readonly jsonEntityIds: boolean;
  /** How rows are rendered: the entity id form and whether cells carry writer_schema. */
  readonly renderSpec: RowRenderSpec;
  /** What a POSTed row may carry beyond entityId and cells (model/cells/row-input.ts options). */
  readonly rowInput: { readonly writerSchemas: boolean; readonly rowKeyField: boolean };
  /** The POST response's reference to a written row. */
  target(instance: string, table: string, input: EntityIdInput, rowKey: Buffer, format: RowKeyFormat): string;
}

const READ_PARAMS = ['limit', 'cols', 'versions', 'timerange'];
/** Named freshening parameters of revisions 2 and 3 (`fresh.<key>` are matched by prefix: lib/http/freshening.ts). */
const FRESHENING_PARAMS = ['freshen', 'timeout'];

/** The path of a table's rows: every revision's POST targets start with it. */
export function rowsPath(instance: string, table: string): string {
  return `/v1/instances/${instance}/tables/${table}/rows`;
}

const revision3: Dialect = {
  revision: 3,
  startParam: 'start_eid',
  endParam: 'end_eid',
  scanParams: new Set(['eid', 'eids', 'start_eid', 'end_eid', ...READ_PARAMS, ...FRESHENING_PARAMS]),
  freshening: true,
  // KijiREST's ScanRequestSampler still sends start_rk to revision 3 servers, which ignored it.
  rangeHints: new Map([
    ['start_rk', 'a hex row key bound is start_eid=rowkey_hex=<hex> in revision 3'],
    ['end_rk', 'a hex row key bound is end_eid=rowkey_hex=<hex> in revision 3'],
  ]),
  parseEid: (text, _format, allowWildcards) => parseEntityIdText(text, { allowWildcards }),
  // A row key bound is a byte position: it need not be a whole key of the table's format.
  parseBound: (text, format) => {
    const input = parseEntityIdText(text, { allowWildcards: false });
    return input.kind === 'rowKey' ? input.rowKey : resolveEntityId(format, input);
  },
  formatBound: (rowKey) => `rowkey_hex=${rowKey.toString('hex')}`,
  bulkItem: (item) => (typeof item === 'string' ? parseEntityIdText(item, { allowWildcards: false }) : entityIdFromBody(item)),
  bodyEntityId: (value) => {
    if (value === undefined) throw rgError('RG_ERR_BAD_ENTITY_ID', 'EntityId was not specified: every row needs an entityId');
    return entityIdFromBody(value);
  },
  jsonEntityIds: true,
  renderSpec: { entityIdForm: 'json', withSchema: true },
  rowInput: { writerSchemas: true, rowKeyField: false },
  target: (instance, table, input) => `${rowsPath(instance, table)}?eid=${encodeURIComponent(input.text)}`,
};

function shellDialect(revision: 1 | 2): Dialect {
  return {
    revision,
    startParam: 'start_rk',
    endParam: 'end_rk',
    // Freshening came with REST-49/54 in 0.6.0 (revision 2); revision 1 has none.
    scanParams: new Set(['eid', 'eids', 'start_rk', 'end_rk', ...READ_PARAMS, ...(revision === 2 ? FRESHENING_PARAMS : [])]),
    freshening: revision === 2,
    rangeHints: new Map([
      ['start_eid', `range bounds are start_rk=<hex row key> in revision ${revision}`],
      ['end_eid', `range bounds are end_rk=<hex row key> in revision ${revision}`],
    ]),
    // Wildcards came with REST-32 in 0.6.0 (revision 2); revision 1 has none.
    parseEid: (text, format, allowWildcards) => {
      try {
        return parseShellEntityId(text, format, { allowWildcards: allowWildcards && revision === 2 });
      } catch (e) {
        if (revision === 1 && allowWildcards && isRowgateError(e) && e.code === 'RG_ERR_WILDCARD_NOT_ALLOWED') {
          throw rgError('RG_ERR_WILDCARD_NOT_ALLOWED', `${e.message} (wildcards came with revision 2; the server speaks revision 1)`);
        }
        throw e;
      }
    },
    parseBound: (text, _format, name) => fromHex(text, name),
    formatBound: (rowKey) => rowKey.toString('hex'),
    bulkItem: (item, format) => (typeof item === 'string' ? parseShellEntityId(item, format) : entityIdFromBody(item)),
    bodyEntityId: (value, format) => {
      if (value === undefined) throw rgError('RG_ERR_BAD_ENTITY_ID', 'EntityId was not specified: every row needs an entityId');
      if (typeof value !== 'string') {
        throw rgError('RG_ERR_BAD_ENTITY_ID', `revision ${revision} entityId must be a string such as "[12345]" or "['a', 'b']"`);
      }
      return parseShellEntityId(value, format);
    },
    jsonEntityIds: false,
    // Revision 1 cells have no writer_schema (it came with REST-45, after 0.4.0).
    renderSpec: { entityIdForm: 'shell', withSchema: revision !== 1 },
    // Revision 1 has no writer_schema; its rows (KijiREST 0.4.0) carried the hex rowKey.
    rowInput: { writerSchemas: revision !== 1, rowKeyField: revision === 1 },
    target: (instance, table, _input, rowKey, format) =>
      revision === 1 ? `${rowsPath(instance, table)}/${toHex(rowKey)}` : `${rowsPath(instance, table)}?eid=${formatShellEntityId(format, rowKey)}`,
  };
}

const DIALECTS: Record<Revision, Dialect> = { 1: shellDialect(1), 2: shellDialect(2), 3: revision3 };

export function dialectOf(revision: Revision): Dialect {
  return DIALECTS[revision];
}
