/**
 * The read options of get, scan and export (`--cols`, `--versions`, `--timerange`, `--limit`,
 * `--start-eid`, `--end-eid`), parsed by the same functions as the HTTP query parameters, so they
 * accept and refuse exactly what GET rows does (revision 3 entity ids).
 */
import { InvalidArgumentError, type Command } from 'commander';
import { dialectOf, storableKey } from '../../lib/http/dialect.js';
import { parseEntityIdText, resolveEntityId } from '../../lib/model/entity-id.js';
import { parseLimit, parseReadSpec } from '../../lib/model/read-request.js';
import type { ReadSpec, TableLayout } from '../../lib/model/types.js';
import type { ScanRequest } from '../../lib/store/store.js';

/** The CLI speaks revision 3, as the rows it prints. */
const REVISION_3 = dialectOf(3);

export interface ReadFlags {
  readonly cols?: string;
  readonly versions?: string;
  readonly timerange?: string;
}

export interface ScanFlags extends ReadFlags {
  readonly limit?: string;
  readonly startEid?: string;
  readonly endEid?: string;
}

export function withReadOptions(cmd: Command, defaultVersions: string): Command {
  return cmd
    .option('--cols <cols>', 'columns: * or a comma-separated list of family and family:qualifier', '*')
    .option('--versions <n>', 'versions per column: a positive integer or all', defaultVersions)
    .option('--timerange <min..max>', 'cell timestamps in [min, max) milliseconds; one side may be empty');
}

export function withScanOptions(cmd: Command, defaultLimit: string, defaultVersions: string): Command {
  return withReadOptions(cmd, defaultVersions)
    .option('--limit <n>', 'rows at most (-1 = all)', defaultLimit)
    .option('--start-eid <eid>', 'first entity id (inclusive): a JSON array such as [1234], or rowkey=... / rowkey_hex=...')
    .option('--end-eid <eid>', 'entity id to stop before (exclusive), in the same forms');
}

export function readSpecOf(layout: TableLayout, flags: ReadFlags): ReadSpec {
  return parseReadSpec(layout, { cols: flags.cols, versions: flags.versions, timerange: flags.timerange });
}

/**
 * An entity id option as a row key (no wildcards), refused (RG_ERR_ROW_KEY_TOO_LONG, naming the
 * option) when longer than the store's limit, as HTTP refuses such an eid or bound: no such row
 * can exist, and a bound that long is almost certainly a mistake.
 */
export function rowKeyOf(layout: TableLayout, text: string, maxRowKeyBytes: number, option: string): Buffer {
  return storableKey(resolveEntityId(layout.keyFormat, parseEntityIdText(text, { allowWildcards: false })), maxRowKeyBytes, option);
}

/**
 * A range bound option as a row key: parsed as GET rows parses start_eid/end_eid (a `rowkey=` bound
 * is a byte position and need not be a whole key of the table's format), with the same length check.
 */
function boundOf(layout: TableLayout, text: string, maxRowKeyBytes: number, option: string): Buffer {
  return storableKey(REVISION_3.parseBound(text, layout.keyFormat, option), maxRowKeyBytes, option);
}

export function scanRequestOf(layout: TableLayout, flags: ScanFlags, maxRowKeyBytes: number): ScanRequest {
  return {
    start: flags.startEid === undefined ? undefined : boundOf(layout, flags.startEid, maxRowKeyBytes, '--start-eid'),
    end: flags.endEid === undefined ? undefined : boundOf(layout, flags.endEid, maxRowKeyBytes, '--end-eid'),
    limit: parseLimit(flags.limit ?? '-1'),
    read: readSpecOf(layout, flags),
  };
}

/** commander argument parser for a positive integer option. */
export function positiveInteger(text: string): number {
  const n = /^[0-9]+$/.test(text) ? Number(text) : NaN;
  if (!Number.isSafeInteger(n) || n < 1) throw new InvalidArgumentError('must be a positive integer');
  return n;
}
