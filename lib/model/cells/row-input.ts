/**
 * One written row in the POST shape -> RowWrite, validated completely (shape, entity id, every
 * cell) before the caller writes anything. Shared by the HTTP POST handler and `rowgate import`:
 *
 *   {"entityId": <entity id>, "cells": {family: {qualifier: [{value, timestamp?, writer_schema?}]}}}
 *
 * Entity ids are read in the revision 3 body forms by default (a JSON array of components or a
 * rowkey= / rowkey_hex= / hbase= / hbase_hex= string); revisions 1 and 2 pass their own reader.
 */
import { rgError } from '../../errors.js';
import { encodeCell, encodeCellCached, type EncodeCellArgs } from './cell-codec.js';
import { entityIdFromBody, resolveEntityId } from '../keys/entity-id.js';
import { fromHex, toHex } from '../keys/binary-text.js';
import type { EncodedCell, EntityIdInput, FamilyLayout, JsonValue, RowKeyFormat, RowWrite, SchemaTable, TableLayout } from '../types.js';

export type EntityIdReader = (value: JsonValue | undefined, format: RowKeyFormat) => EntityIdInput;

export interface RowInputContext {
  readonly layout: TableLayout;
  /** The schema table of the instance the row is written to. */
  readonly schemas: SchemaTable;
  /** Cells may carry writer_schema (default true; false: one is refused and the layout schema used). */
  readonly writerSchemas?: boolean;
  /** A row may carry `rowKey` naming the same row as its entityId (default false). */
  readonly rowKeyField?: boolean;
  /** How `entityId` is read; default: the revision 3 body forms. */
  readonly readEntityId?: EntityIdReader;
  /** When given, a longer row key is refused here (RG_ERR_ROW_KEY_TOO_LONG) rather than by the store. */
  readonly maxRowKeyBytes?: number;
}

export interface EncodedRowInput {
  readonly row: RowWrite;
  /** The entity id as given (for POST targets and messages). */
  readonly entityId: EntityIdInput;
}

const ROW_FIELDS = new Set(['entityId', 'cells']);

/**
 * A cell with this timestamp is skipped, the rest of its row written. KijiREST skipped cells with a
 * negative timestamp on POST (0.4.0 through 1.4.0) and wrote -1 on cells it could not decode on
 * GET; the Ruby client keeps -1 when it strips timestamps, so that a row read and written back
 * round-trips (docs/interface.md, "What KijiREST did that rowgate does the same way"). Other negative timestamps are a 400: only -1 has a meaning.
 */
export const SKIPPED_TIMESTAMP = -1;
const CELL_FIELDS = new Set(['value', 'timestamp', 'writer_schema']);

type JsonObject = { [key: string]: JsonValue };

function isJsonObject(v: JsonValue | undefined): v is JsonObject {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/** Whether the family (undefined: not in the layout) has the column: any qualifier of a map family. */
function hasColumn(family: FamilyLayout | undefined, qualifier: string): boolean {
  return family !== undefined && (family.mapSchema !== undefined || family.columns.some((c) => c.name === qualifier));
}

/** The revision 3 body entity id: required, an array of components or a row key string form. */
export const readEntityIdRevision3: EntityIdReader = (value) => {
  if (value === undefined) throw rgError('RG_ERR_BAD_ENTITY_ID', 'entityId is missing: every row needs an entityId');
  return entityIdFromBody(value);
};

/**
 * Revision 1 rows of KijiREST 0.4.0 carried `rowKey` (the hex row key) beside `entityId`, and
 * clients of that time post them back: it is accepted when it names the row `entityId` names
 * (hex of either case), since a row cannot be written under two keys.
 */
function checkRowKeyField(given: JsonValue, rowKey: Buffer, entityId: EntityIdInput): void {
  if (typeof given !== 'string') throw rgError('RG_ERR_BAD_BODY', 'rowKey must be a string: the row key in hex');
  const named = fromHex(given, 'rowKey');
  if (!named.equals(rowKey)) {
    throw rgError(
      'RG_ERR_BAD_ENTITY_ID',
      `rowKey ${given.slice(0, 200)} and entityId ${entityId.text.slice(0, 200)} name different rows (the row key of that entityId is ${toHex(rowKey)})`,
    );
  }
}

/**
 * Validates and encodes one row object. Throws a coded error naming the bad part (the field, the
 * column and the cell index); nothing is written here.
 */
export async function encodeRowInput(item: JsonValue, ctx: RowInputContext): Promise<EncodedRowInput> {
  // Cells whose encoding needed a cold cache, by position; each pass settles at least one more.
  const awaited = new Map<number, EncodedCell>();
  for (;;) {
    const r = encodeRowCore(item, ctx, awaited);
    if (!(r instanceof ColdCell)) return r;
    awaited.set(r.index, await encodeCell(r.args));
  }
}

/**
 * encodeRowInput without a promise when every cache the row needs is warm (the usual case after
 * the first rows of a table): the encoded row, or undefined (then await encodeRowInput). Throws
 * the same errors encodeRowInput would.
 */
export function encodeRowInputCached(item: JsonValue, ctx: RowInputContext): EncodedRowInput | undefined {
  const r = encodeRowCore(item, ctx, undefined);
  return r instanceof ColdCell ? undefined : r;
}

/** A cell whose encoding needs an awaited cache fill. */
class ColdCell {
  constructor(
    readonly index: number,
    readonly args: EncodeCellArgs,
  ) {}
}

function encodeRowCore(item: JsonValue, ctx: RowInputContext, awaited: ReadonlyMap<number, EncodedCell> | undefined): EncodedRowInput | ColdCell {
  if (!isJsonObject(item)) throw rgError('RG_ERR_BAD_BODY', 'a row must be a JSON object with entityId and cells');
  const writerSchemas = ctx.writerSchemas ?? true;
  const rowKeyField = ctx.rowKeyField ?? false;
  for (const key of Object.keys(item)) {
    if (!ROW_FIELDS.has(key) && !(rowKeyField && key === 'rowKey')) {
      throw rgError('RG_ERR_BAD_BODY', `unknown row field ${JSON.stringify(key)} (a row has entityId and cells)`);
    }
  }
  const { layout, schemas } = ctx;
  const entityId = (ctx.readEntityId ?? readEntityIdRevision3)(item.entityId, layout.keyFormat);
  const rowKey = resolveEntityId(layout.keyFormat, entityId);
  if (item.rowKey !== undefined) checkRowKeyField(item.rowKey, rowKey, entityId);
  if (ctx.maxRowKeyBytes !== undefined && rowKey.length > ctx.maxRowKeyBytes) {
    throw rgError(
      'RG_ERR_ROW_KEY_TOO_LONG',
      `row key of entity id ${entityId.text.slice(0, 80)} has ${rowKey.length} bytes; the store accepts at most ${ctx.maxRowKeyBytes}`,
    );
  }

  const families = item.cells ?? {};
  if (!isJsonObject(families)) throw rgError('RG_ERR_BAD_BODY', 'cells must be an object: {family: {qualifier: [cell, ...]}}');
  const cells: EncodedCell[] = [];
  for (const family of Object.keys(families)) {
    const qualifiers = families[family];
    if (!isJsonObject(qualifiers)) throw rgError('RG_ERR_BAD_BODY', `cells.${family} must be an object: {qualifier: [cell, ...]}`);
    // Names are checked even where no cell follows (each cell's column is checked when encoded): a
    // misspelt family or column would otherwise be a silent no-op answered 200.
    const familyLayout = layout.families.get(family);
    const names = Object.keys(qualifiers);
    if (familyLayout === undefined && names.length === 0) throw rgError('RG_ERR_UNKNOWN_COLUMN', `Specified family does not exist: ${family}`);
    for (const qualifier of names) {
      const list = qualifiers[qualifier];
      if (!Array.isArray(list)) throw rgError('RG_ERR_BAD_BODY', `cells of column ${family}:${qualifier} must be a list of cells`);
      if (list.length === 0 && !hasColumn(familyLayout, qualifier))
        throw rgError('RG_ERR_UNKNOWN_COLUMN', `Specified column does not exist: ${family}:${qualifier}`);
      for (let i = 0; i < list.length; i++) {
        const cell = list[i];
        if (!isJsonObject(cell) || !('value' in cell)) {
          throw rgError('RG_ERR_BAD_BODY', `cell ${i} of column ${family}:${qualifier} must be an object with a value`);
        }
        for (const key of Object.keys(cell)) {
          if (!CELL_FIELDS.has(key)) {
            throw rgError(
              'RG_ERR_BAD_BODY',
              `unknown field ${JSON.stringify(key)} in cell ${i} of column ${family}:${qualifier} (a cell has value, timestamp, writer_schema)`,
            );
          }
        }
        if (!writerSchemas && cell.writer_schema !== undefined) {
          throw rgError('RG_ERR_BAD_PARAMETER', "writer_schema is not part of revision 1 (the column's layout schema is used)");
        }
        if (cell.timestamp === SKIPPED_TIMESTAMP) {
          // Its column must still exist (a typo is not skipped silently); its value is not read.
          if (!hasColumn(familyLayout, qualifier)) throw rgError('RG_ERR_UNKNOWN_COLUMN', `Specified column does not exist: ${family}:${qualifier}`);
          continue;
        }
        const index = cells.length;
        const args: EncodeCellArgs = {
          layout,
          family,
          qualifier,
          timestamp: cell.timestamp,
          value: cell.value!,
          writerSchema: cell.writer_schema,
          schemas,
          writerSchemas,
        };
        const encoded = awaited?.get(index) ?? encodeCellCached(args);
        if (encoded === undefined) return new ColdCell(index, args);
        cells.push(encoded);
      }
    }
  }
  return { row: { rowKey, cells }, entityId };
}
