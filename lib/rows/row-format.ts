/**
 * Serializes rows to the JSON documents of each revision. Cell values arrive as stored wire JSON,
 * so a row is assembled by concatenation rather than through an object tree (a scan writes
 * millions of them). Every piece is compact JSON in which CR and LF can only appear escaped, so
 * the CR LF frame terminator never occurs inside a document (DESIGN.md 4, row stream).
 */
import type { Revision } from '../config/config.js';
import { resolveEntityId } from '../model/keys/entity-id.js';
import type { EntityIdInput, RowKeyFormat, RowOut } from '../model/types.js';
import { entityIdText, type RowRenderSpec } from '../store/store.js';
import { dialectOf } from './dialect.js';

/** Rows are framed by CR LF, after every row including the last. */
export const ROW_TERMINATOR = '\r\n';

const ENTITY_ID_START = '{"entityId":';
const CELLS_START = ',"cells":';

/**
 * The entity id of a rendered row document (one without its CR LF), read back in the revision's
 * form: the text up to `,"cells":`, which cannot occur inside the entity id (its strings escape
 * every quote). Revision 3 arrays are parsed as they are (exact longs); strings (rowkey=..., the
 * shell form) are JSON-decoded first.
 */
export function entityIdOfDocument(row: Buffer | string, format: RowKeyFormat, revision: Revision): EntityIdInput {
  const text = typeof row === 'string' ? row : row.toString('utf8');
  const end = text.indexOf(CELLS_START);
  if (!text.startsWith(ENTITY_ID_START) || end < 0) throw new Error('a rendered row does not start with its entityId');
  const slice = text.slice(ENTITY_ID_START.length, end);
  const eid = slice.startsWith('"') ? (JSON.parse(slice) as string) : slice;
  return dialectOf(revision).parseEid(eid, format, false);
}

/** The row key of a rendered row document. */
export function rowKeyOfDocument(row: Buffer | string, format: RowKeyFormat, revision: Revision): Buffer {
  return resolveEntityId(format, entityIdOfDocument(row, format, revision));
}

/** The last row document of framed rows (without its CR LF; a document never holds one). */
export function lastRowOf(rows: Buffer): Buffer {
  const before = rows.lastIndexOf(ROW_TERMINATOR, rows.length - 3);
  return rows.subarray(before < 0 ? 0 : before + 2, rows.length - 2);
}

export type RowSerializer = (row: RowOut) => string;

/**
 * What a store's fast path (Store.scanChunks) needs to render rows exactly as rowSerializer does:
 * the entity id text and whether cells carry writer_schema.
 */
export function rowRenderSpec(revision: Revision): RowRenderSpec {
  return dialectOf(revision).renderSpec;
}

// Serializers depend only on the key format (one object per parsed layout) and the revision:
// built once per layout, not per request.
const serializers = new WeakMap<RowKeyFormat, Map<Revision, RowSerializer>>();

export function rowSerializer(format: RowKeyFormat, revision: Revision): RowSerializer {
  let byRevision = serializers.get(format);
  if (byRevision === undefined) {
    byRevision = new Map();
    serializers.set(format, byRevision);
  }
  let serializer = byRevision.get(revision);
  if (serializer === undefined) {
    serializer = buildRowSerializer(format, revision);
    byRevision.set(revision, serializer);
  }
  return serializer;
}

function buildRowSerializer(format: RowKeyFormat, revision: Revision): RowSerializer {
  const { entityIdForm, withSchema } = rowRenderSpec(revision);
  const entityId = entityIdText(format, entityIdForm);
  const keyCache = new Map<string, string>();
  const jsonKey = (name: string): string => {
    let k = keyCache.get(name);
    if (k === undefined) {
      k = JSON.stringify(name);
      if (keyCache.size < 10_000) keyCache.set(name, k);
    }
    return k;
  };

  return (row) => {
    let out = `{"entityId":${entityId(row.rowKey)},"cells":{`;
    let family: string | undefined;
    let qualifier: string | undefined;
    for (const cell of row.cells) {
      if (cell.family !== family) {
        if (family !== undefined) out += ']},';
        out += `${jsonKey(cell.family)}:{${JSON.stringify(cell.qualifier)}:[`;
        family = cell.family;
        qualifier = cell.qualifier;
      } else if (cell.qualifier !== qualifier) {
        out += `],${JSON.stringify(cell.qualifier)}:[`;
        qualifier = cell.qualifier;
      } else {
        out += ',';
      }
      out += `{"timestamp":${cell.timestamp},"value":${cell.json}`;
      out += withSchema ? `,"writer_schema":${cell.schemaId}}` : '}';
    }
    if (family !== undefined) out += ']}';
    return out + '}}';
  };
}
