/**
 * What differs between the three revisions of the row operations, as seen by a test: how entity
 * ids are written in URL parameters, POST bodies, bulk gets and returned rows, the range
 * parameters, POST targets, and writer_schema (absent from revision 1). Tests written through a
 * Forms object run unchanged under every revision (docs/interface.md, "Revisions").
 *
 * - revision 3: entity ids are JSON arrays everywhere, row keys `rowkey_hex=<hex>`, ranges
 *   `start_eid`/`end_eid` (any entity id form), targets `rows?eid=<URL-encoded JSON>`;
 * - revisions 1 and 2: entity ids are shell-form strings (`[12345]`, `['a', 'b']`) in every
 *   place, row keys `hbase=hex:<hex>`, ranges `start_rk`/`end_rk` (hex row keys); revision 1 has
 *   no wildcards, refuses writer_schema in POST bodies and renders cells without it, and its
 *   targets are the row resource `rows/<hex>`; revision 2 targets are `rows?eid=<shell form>`,
 *   not URL-encoded, as 0.6.0 wrote them.
 */
import type { Revision } from '../../../lib/config/config.js';

/** One entity id component; `[]` is a wildcard. */
export type Component = string | number | bigint | [];
export type Components = readonly Component[];

/** A range bound: a hex row key, and for revision 3 optionally the entity id it stands for. */
export interface Bound {
  readonly hex: string;
  readonly eid?: Components;
}

export interface Forms {
  readonly revision: Revision;
  /** Whether `eid` may hold wildcards (revision 2 and 3). */
  readonly wildcards: boolean;
  /** The `eid` parameter text (not URL-encoded). */
  eid(c: Components): string;
  /** A row key written as an entity id (in `eid`, `eids` and POST bodies). */
  rowKey(hex: string): string;
  /** `entityId` of a POSTed row, which is also the `entityId` of a returned row. */
  id(c: Components): unknown;
  /** JSON text of id(c), exact for 64-bit integers. */
  idJson(c: Components): string;
  /** The `entityId` form of the other revisions, which this one refuses in a POST body. */
  foreignId(c: Components): unknown;
  /** One element of the `eids` array. */
  bulk(c: Components): unknown;
  /** Range query parameters ([start, end)); omitted bounds are open. */
  range(start?: Bound, end?: Bound): string;
  /** A range parameter of another revision, and its name: a 400 naming the revision served. */
  readonly foreignParam: { readonly query: string; readonly name: string };
  /** The POST response's target of a row of the table at `rowsPath`. */
  target(rowsPath: string, c: Components, hex: string): string;
  /** A cell to POST: writer_schema is dropped for revision 1, which refuses it (the layout's schema is used). */
  post<C extends { writer_schema?: unknown }>(cell: C): Omit<C, 'writer_schema'> | C;
  /** A returned cell: writer_schema is there from revision 2 on. */
  cell(timestamp: number, value: unknown, schemaId: number): { timestamp: number; value: unknown; writer_schema?: number };
  /** JSON text of a returned cell (field order timestamp, value, writer_schema). */
  cellJson(timestamp: number, valueJson: string, schemaId: number): string;
  /** writer_schema of a returned cell: the id, or undefined in revision 1. */
  schema(id: number): number | undefined;
  /** The code of a POST whose writer_schema is bad in the way `code` says; revision 1 refuses any writer_schema. */
  schemaError(code: string): string;
}

const q = (v: string) => encodeURIComponent(v);

const componentJson = (c: Component): string => (Array.isArray(c) ? '[]' : typeof c === 'string' ? JSON.stringify(c) : String(c));
const componentShell = (c: Component): string => (Array.isArray(c) ? '[]' : typeof c === 'string' ? `'${c}'` : String(c));

/** Revision 3 JSON text of components (exact for bigints). */
export const jsonEid = (c: Components): string => `[${c.map(componentJson).join(',')}]`;
/** Revision 1/2 shell text of components: strings single-quoted, numbers bare, ", " between. */
export const shellEid = (c: Components): string => `[${c.map(componentShell).join(', ')}]`;

/** A JS value for JSON.stringify (bigints become numbers; only for ids within 2^53). */
const jsValue = (c: Components): unknown[] => c.map((x) => (typeof x === 'bigint' ? Number(x) : x));

function shellForms(revision: 1 | 2): Forms {
  return {
    revision,
    wildcards: revision === 2,
    eid: shellEid,
    rowKey: (hex) => `hbase=hex:${hex}`,
    id: shellEid,
    idJson: (c) => JSON.stringify(shellEid(c)),
    foreignId: jsValue,
    bulk: shellEid,
    range: (s, e) => [s && `start_rk=${s.hex}`, e && `end_rk=${e.hex}`].filter(Boolean).join('&'),
    foreignParam: { query: `start_eid=${q('[1]')}`, name: 'start_eid' },
    target: (rowsPath, c, hex) => (revision === 1 ? `${rowsPath}/${hex}` : `${rowsPath}?eid=${shellEid(c)}`),
    post: (cell) => {
      if (revision !== 1) return cell;
      const { writer_schema: _, ...rest } = cell;
      return rest;
    },
    cell: (timestamp, value, schemaId) => (revision === 1 ? { timestamp, value } : { timestamp, value, writer_schema: schemaId }),
    cellJson: (timestamp, valueJson, schemaId) => `{"timestamp":${timestamp},"value":${valueJson}${revision === 1 ? '' : `,"writer_schema":${schemaId}`}}`,
    schema: (id) => (revision === 1 ? undefined : id),
    schemaError: (code) => (revision === 1 ? 'RG_ERR_BAD_PARAMETER' : code),
  };
}

const revision3: Forms = {
  revision: 3,
  wildcards: true,
  eid: jsonEid,
  rowKey: (hex) => `rowkey_hex=${hex}`,
  id: jsValue,
  idJson: jsonEid,
  foreignId: shellEid,
  bulk: jsValue,
  range: (s, e) =>
    [s && `start_eid=${q(s.eid ? jsonEid(s.eid) : `rowkey_hex=${s.hex}`)}`, e && `end_eid=${q(e.eid ? jsonEid(e.eid) : `rowkey_hex=${e.hex}`)}`]
      .filter(Boolean)
      .join('&'),
  foreignParam: { query: 'start_rk=00', name: 'start_rk' },
  target: (rowsPath, c) => `${rowsPath}?eid=${q(jsonEid(c))}`,
  post: (cell) => cell,
  cell: (timestamp, value, schemaId) => ({ timestamp, value, writer_schema: schemaId }),
  cellJson: (timestamp, valueJson, schemaId) => `{"timestamp":${timestamp},"value":${valueJson},"writer_schema":${schemaId}}`,
  schema: (id) => id,
  schemaError: (code) => code,
};

export const FORMS: Record<Revision, Forms> = { 1: shellForms(1), 2: shellForms(2), 3: revision3 };
