/**
 * Renders a compact row (compact-row.ts) into response bytes, byte-identical to serializing the
 * cells a CellPicker keeps with lib/rows/row-format.ts. Three paths, cheapest first:
 *
 *  1. whole row: every column's newest version is the answer (versions 1 or no older versions, no
 *     `cols`, the time range and TTL cover every newest version): revision 3 copies the stored
 *     text as it is, revision 2 with its own entity id. This is a point get's and an export's path.
 *  2. newest versions, column by column: the answer is still at most the newest version of each
 *     column (`cols`, a time range, TTL, revision 1): the kept columns' stored fragments and the
 *     stored quoted names between them are copied.
 *  3. every version: the row is decoded and its cells go through a CellPicker.
 */
import { END_OF_TIME } from '../../model/read/read-request.js';
import type { ReadSpec, TableLayout, Timestamp } from '../../model/types.js';
import { CellPicker, expiryOf } from '../cell-picker.js';
import { entityIdText, type RowRenderSpec } from '../store.js';
import { COLUMN_BYTES, decodeCompactRow, HEADER_BYTES, readTimestamp, readU16, readU32, schemaPartBytes } from './compact-row.js';
import { rowKeyOf } from './scan-cursor.js';

/** Where rendered bytes go (the ChunkRenderer's buffer). */
export interface RenderOut {
  reserve(n: number): void;
  buf: Buffer;
  pos: number;
}

const COUNTER_BIT = 0x8000_0000;
const enc = (s: string): Buffer => Buffer.from(s, 'latin1');
const ENTITY_ID_OPEN = enc('{"entityId":');
const CELLS_OPEN = enc(',"cells":{');
const ROW_CLOSE_EMPTY = enc('}}\r\n');
const ROW_CLOSE = enc(']}}}\r\n');

interface FamilyPlan {
  readonly expiredBefore: number;
  /** Quoted qualifiers selected (`cols=f:q`); undefined = all. */
  readonly qualifiers?: ReadonlySet<string>;
  /** Quoted declared qualifiers of a group family; undefined for a map family. */
  readonly declared?: ReadonlySet<string>;
}

export class CompactRenderer {
  private readonly wholeRows: boolean;
  private readonly shellIds: boolean;
  private readonly withSchema: boolean;
  /** Newest versions older than this are expired in some family: a row holding one is not copied whole. */
  private readonly latestExpiry: number;
  private readonly minTs: Timestamp;
  private readonly maxTs: Timestamp;
  /** By quoted family name (family names are ASCII, so latin1 text is their JSON form). */
  private readonly families = new Map<string, FamilyPlan | null>();
  private readonly picker: CellPicker;
  private readonly entityId: (rowKey: Buffer) => string;
  /** Rendered cells of the last row. */
  cells = 0;

  constructor(
    layout: TableLayout,
    private readonly read: ReadSpec,
    render: RowRenderSpec,
    now: number,
  ) {
    this.withSchema = render.withSchema;
    this.shellIds = render.entityIdForm === 'shell';
    this.entityId = entityIdText(layout.keyFormat, render.entityIdForm);
    this.picker = new CellPicker(layout, read, now);
    this.minTs = read.minTimestamp;
    this.maxTs = read.maxTimestamp === END_OF_TIME ? Infinity : read.maxTimestamp;
    let latest = -Infinity;
    const selected = read.columns === undefined ? undefined : new Map<string, Set<string> | undefined>();
    for (const c of read.columns ?? []) {
      if (c.qualifier === undefined) selected!.set(c.family, undefined);
      else if (!selected!.has(c.family)) selected!.set(c.family, new Set([JSON.stringify(c.qualifier)]));
      else selected!.get(c.family)?.add(JSON.stringify(c.qualifier));
    }
    for (const family of layout.families.values()) {
      const expiredBefore = expiryOf(family.ttlSeconds, now);
      if (expiredBefore > latest) latest = expiredBefore;
      const quoted = JSON.stringify(family.name);
      if (selected !== undefined && !selected.has(family.name)) {
        this.families.set(quoted, null);
        continue;
      }
      const declared = family.mapSchema ? undefined : new Set(family.columns.map((c) => JSON.stringify(c.name)));
      this.families.set(quoted, { expiredBefore, qualifiers: selected?.get(family.name), declared });
    }
    this.latestExpiry = latest;
    this.wholeRows = read.columns === undefined;
  }

  /**
   * Renders the compact row in `v[0, end)` (an LMDB value, possibly a view of lmdb-js's read
   * buffer). `key` is its row key, or with `escaped` its row prefix (`esc(rowKey) 00 00`, the
   * entry's key), unescaped only where the row key is needed (revisions 1 and 2 write the entity
   * id from it; revision 3's is stored): a scan thread spent 7% of its time unescaping keys. A row
   * none of whose cells is kept is taken back, unless `keepEmpty` (point gets answer a row with
   * empty cells). Returns whether the row was written.
   */
  render(out: RenderOut, key: Buffer, escaped: boolean, v: Buffer, keepEmpty: boolean): boolean {
    const n = readU16(v, 2);
    const textBytes = readU32(v, 4);
    const history = readU32(v, 8);
    const oldest = v.readDoubleLE(16);
    const newest = v.readDoubleLE(24);
    const newestOnly = history === 0 || (this.read.maxVersions === 1 && newest < this.maxTs);
    if (!newestOnly) return this.renderVersions(out, key, escaped, v, keepEmpty);
    if (this.wholeRows && this.withSchema && n > 0 && oldest >= this.latestExpiry && oldest >= this.minTs && newest < this.maxTs) {
      if (this.shellIds) {
        const eidEnd = HEADER_BYTES + readU16(v, 12);
        const id = this.entityId(escaped ? rowKeyOf(key, key.length) : key);
        out.reserve(ENTITY_ID_OPEN.length + id.length * 3 + textBytes);
        out.pos += ENTITY_ID_OPEN.copy(out.buf, out.pos);
        out.pos += out.buf.write(id, out.pos, 'utf8');
        out.pos += v.copy(out.buf, out.pos, eidEnd, HEADER_BYTES + textBytes);
      } else {
        out.reserve(textBytes);
        out.pos += v.copy(out.buf, out.pos, HEADER_BYTES, HEADER_BYTES + textBytes);
      }
      this.cells = n;
      return true;
    }
    return this.renderNewest(out, key, escaped, v, n, textBytes, keepEmpty);
  }

  private openRow(out: RenderOut, key: Buffer, escaped: boolean, v: Buffer): void {
    if (this.shellIds) {
      const id = this.entityId(escaped ? rowKeyOf(key, key.length) : key);
      out.reserve(ENTITY_ID_OPEN.length + id.length * 3 + CELLS_OPEN.length);
      out.pos += ENTITY_ID_OPEN.copy(out.buf, out.pos);
      out.pos += out.buf.write(id, out.pos, 'utf8');
      out.pos += CELLS_OPEN.copy(out.buf, out.pos);
    } else {
      // `{"entityId":<id>,"cells":{` as stored.
      const end = HEADER_BYTES + readU16(v, 12) + CELLS_OPEN.length;
      out.reserve(end - HEADER_BYTES);
      out.pos += v.copy(out.buf, out.pos, HEADER_BYTES, end);
    }
  }

  private closeRow(out: RenderOut, start: number, keepEmpty: boolean): boolean {
    const close = this.cells > 0 ? ROW_CLOSE : ROW_CLOSE_EMPTY;
    if (this.cells === 0 && !keepEmpty) {
      out.pos = start;
      return false;
    }
    out.reserve(close.length);
    out.pos += close.copy(out.buf, out.pos);
    return true;
  }

  /** Path 2: each column's newest version if kept, from the stored fragments and names. */
  private renderNewest(out: RenderOut, key: Buffer, escaped: boolean, v: Buffer, n: number, textBytes: number, keepEmpty: boolean): boolean {
    const start = out.pos;
    this.openRow(out, key, escaped, v);
    this.cells = 0;
    let dir = HEADER_BYTES + textBytes;
    let famStart = 0;
    let famEnd = 0;
    let plan: FamilyPlan | null | undefined = null;
    let emittedFamily = -1;
    for (let i = 0; i < n; i++, dir += COLUMN_BYTES) {
      const fragStart = HEADER_BYTES + readU32(v, dir);
      const fragEnd = HEADER_BYTES + readU32(v, dir + 4);
      const famBytes = readU16(v, dir + 8);
      const qualBytes = readU16(v, dir + 10);
      const qualStart = fragStart - 2 - qualBytes;
      if (famBytes > 0) {
        famEnd = qualStart - 2;
        famStart = famEnd - famBytes;
        plan = this.families.get(v.toString('latin1', famStart, famEnd));
      }
      if (plan === null || plan === undefined) continue;
      const timestamp = readTimestamp(v, dir + 16);
      if (timestamp < plan.expiredBefore || timestamp < this.minTs || timestamp >= this.maxTs) continue;
      if (plan.qualifiers !== undefined || plan.declared !== undefined) {
        const quoted = v.toString('utf8', qualStart, qualStart + qualBytes);
        if (plan.qualifiers !== undefined && !plan.qualifiers.has(quoted)) continue;
        if (plan.declared !== undefined && !plan.declared.has(quoted)) continue;
      }
      // Glue: `"fam":{` for a family's first kept column (after `]},` unless it is the row's first),
      // else `],`; then `"q":[` and the fragment, as stored.
      const schemaBytes = this.withSchema ? 0 : schemaPartBytes(readU32(v, dir + 12) & ~COUNTER_BIT);
      out.reserve(famBytes + 8 + (fragEnd - qualStart) + (famEnd - famStart));
      const b = out.buf;
      if (emittedFamily !== famStart) {
        if (emittedFamily >= 0) {
          b[out.pos++] = 0x5d; // ]
          b[out.pos++] = 0x7d; // }
          b[out.pos++] = 0x2c; // ,
        }
        out.pos += v.copy(b, out.pos, famStart, famEnd);
        b[out.pos++] = 0x3a; // :
        b[out.pos++] = 0x7b; // {
        emittedFamily = famStart;
      } else {
        b[out.pos++] = 0x5d; // ]
        b[out.pos++] = 0x2c; // ,
      }
      out.pos += v.copy(b, out.pos, qualStart, fragEnd - 1 - schemaBytes);
      b[out.pos++] = 0x7d; // }
      this.cells++;
    }
    return this.closeRow(out, start, keepEmpty);
  }

  /** Path 3: every version, through the CellPicker (older versions are asked for). */
  private renderVersions(out: RenderOut, key: Buffer, escaped: boolean, v: Buffer, keepEmpty: boolean): boolean {
    const model = decodeCompactRow(v);
    const start = out.pos;
    this.openRow(out, key, escaped, v);
    this.cells = 0;
    const picker = this.picker;
    picker.beginRow();
    let text = '';
    let family: string | undefined;
    let qualifier: string | undefined;
    for (const c of model.columns) {
      for (const version of c.versions) {
        if (!picker.keep(c.family, c.qualifier, version.timestamp)) continue;
        if (c.family !== family) {
          if (family !== undefined) text += ']},';
          text += `${JSON.stringify(c.family)}:{${JSON.stringify(c.qualifier)}:[`;
          family = c.family;
          qualifier = c.qualifier;
        } else if (c.qualifier !== qualifier) {
          text += `],${JSON.stringify(c.qualifier)}:[`;
          qualifier = c.qualifier;
        } else {
          text += ',';
        }
        text += `{"timestamp":${version.timestamp},"value":${version.json}`;
        text += this.withSchema ? `,"writer_schema":${version.schemaId}}` : '}';
        this.cells++;
      }
    }
    out.reserve(text.length * 3);
    out.pos += out.buf.write(text, out.pos, 'utf8');
    return this.closeRow(out, start, keepEmpty);
  }
}
