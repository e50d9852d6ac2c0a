/**
 * Row documents by revision: the render spec of each revision with its framing, a serializer of
 * one row object to its document (both through the one writer, row-document.ts), and the readers
 * of documents received as text: a remote gateway's response or an export file's last row, which
 * `rowgate export --url` and `--resume` read back to know where to continue. Nothing here reads
 * back a document the gateway itself rendered.
 */
import type { Revision } from '../config/config.js';
import { resolveEntityId } from '../model/keys/entity-id.js';
import type { EntityIdInput, RowKeyFormat, RowOut } from '../model/types.js';
import type { FramedRenderSpec, RowTerminator } from './row-document.js';
import { RowSerializer } from './stages/serialize.js';
import { frame } from './stages/framing.js';
import { dialectOf } from './dialect.js';

/** Rows are framed by CR LF, after every row including the last. */
export const ROW_TERMINATOR: RowTerminator = '\r\n';

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

export type RowSerializerFn = (row: RowOut) => string;

// Specs are frozen objects made once per revision and terminator: the LMDB store finds the
// renderer of the last point get by the spec's identity (lmdb-store.ts pointRenderer).
const specs = new Map<string, FramedRenderSpec>();

/** How a revision's rows are rendered and framed (the dialect's render spec with a terminator). */
export function rowRenderSpec(revision: Revision, terminator: RowTerminator = ROW_TERMINATOR): FramedRenderSpec {
  const id = `${revision}${terminator}`;
  let spec = specs.get(id);
  if (spec === undefined) {
    spec = Object.freeze({ ...dialectOf(revision).renderSpec, terminator });
    specs.set(id, spec);
  }
  return spec;
}

// Serializers depend only on the key format (one object per parsed layout) and the revision:
// built once per layout, not per request.
const serializers = new WeakMap<RowKeyFormat, Map<Revision, RowSerializer>>();

function serializerOf(format: RowKeyFormat, revision: Revision): RowSerializer {
  let byRevision = serializers.get(format);
  if (byRevision === undefined) {
    byRevision = new Map();
    serializers.set(format, byRevision);
  }
  let serializer = byRevision.get(revision);
  if (serializer === undefined) {
    serializer = new RowSerializer(format, dialectOf(revision).renderSpec);
    byRevision.set(revision, serializer);
  }
  return serializer;
}

/** One row's document as a string (no terminator), through the one writer (row-document.ts). */
export function rowSerializer(format: RowKeyFormat, revision: Revision): RowSerializerFn {
  const serializer = serializerOf(format, revision);
  return (row) => serializer.document(row).toString('utf8');
}

/** Rows as the row stream sends them (each document followed by `terminator`): the serialize and framing stages' work, for rows at hand (gets). */
export function framedRows(rows: readonly RowOut[], format: RowKeyFormat, revision: Revision, terminator: RowTerminator): Buffer {
  return frame(serializerOf(format, revision).batch(rows), terminator).bytes;
}
