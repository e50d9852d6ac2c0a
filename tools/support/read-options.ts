/**
 * The read options of get, scan and export (`--cols`, `--versions`, `--timerange`, `--limit`,
 * `--eid`, `--start-eid`, `--end-eid`), parsed by the same functions as the HTTP query parameters
 * of GET rows (lib/http/handlers/rows-read.ts), so they accept and refuse exactly what GET rows
 * does (revision 3 entity ids). A value they refuse is bad usage (exit 2).
 */
import { isRowgateError } from '../../lib/errors.js';
import { dialectOf } from '../../lib/rows/dialect.js';
import { storableKey } from '../../lib/rows/request-keys.js';
import { compileWildcard, parseEntityIdText, resolveEntityId } from '../../lib/model/keys/entity-id.js';
import { parseLimit, parseReadSpec } from '../../lib/model/read/read-request.js';
import { WILDCARD, type ReadSpec, type TableLayout } from '../../lib/model/types.js';
import type { ScanRequest } from '../../lib/store/store.js';
import { CliError, EXIT_USAGE } from './cli-error.js';

/** The CLI speaks revision 3, as the rows it prints. */
const REVISION_3 = dialectOf(3);

export interface ReadFlags {
  readonly cols?: string;
  readonly versions?: string;
  readonly timerange?: string;
}

export interface ScanFlags extends ReadFlags {
  readonly limit?: string;
  readonly eid?: string;
  readonly startEid?: string;
  readonly endEid?: string;
}

/**
 * The rows scan and export read: a scan (a key range, or the rows matching a wildcard `--eid`), or
 * one row by its `--eid` (a point get: a missing row is still printed, with no cells, as GET rows?eid
 * answers).
 */
export type RowSelection =
  { readonly kind: 'scan'; readonly request: ScanRequest } | { readonly kind: 'row'; readonly rowKey: Buffer; readonly read: ReadSpec; readonly limit: number };

/**
 * Runs a parse of option values: what it refuses (a RowgateError from the same parser as the HTTP
 * parameter) is bad usage, exit 2 like an unknown option, with the parser's message.
 */
function optionValues<T>(parse: () => T): T {
  try {
    return parse();
  } catch (e) {
    if (isRowgateError(e)) throw new CliError(e.message, EXIT_USAGE);
    throw e;
  }
}

export function readSpecOf(layout: TableLayout, flags: ReadFlags): ReadSpec {
  return optionValues(() => parseReadSpec(layout, { cols: flags.cols, versions: flags.versions, timerange: flags.timerange }));
}

/**
 * An entity id option as a row key (no wildcards), refused (RG_ERR_ROW_KEY_TOO_LONG, naming the
 * option) when longer than the store's limit, as HTTP refuses such an eid or bound: no such row
 * can exist, and a bound that long is almost certainly a mistake.
 */
export function rowKeyOf(layout: TableLayout, text: string, maxRowKeyBytes: number, option: string): Buffer {
  return optionValues(() => storableKey(resolveEntityId(layout.keyFormat, parseEntityIdText(text, { allowWildcards: false })), maxRowKeyBytes, option));
}

/**
 * A range bound option as a row key: parsed as GET rows parses start_eid/end_eid (a `rowkey=` bound
 * is a byte position and need not be a whole key of the table's format), with the same length check.
 */
function boundOf(layout: TableLayout, text: string, maxRowKeyBytes: number, option: string): Buffer {
  return storableKey(REVISION_3.parseBound(text, layout.keyFormat, option), maxRowKeyBytes, option);
}

/**
 * What scan and export read, as GET rows decides it: `--eid` with a wildcard component is a
 * filtered scan (compileWildcard, honouring --limit), `--eid` without one is that row, otherwise a
 * scan of [--start-eid, --end-eid). `--eid` with a range option is ambiguous (GET rows answers
 * RG_ERR_AMBIGUOUS_REQUEST), so bad usage.
 */
export function selectionOf(layout: TableLayout, flags: ScanFlags, maxRowKeyBytes: number): RowSelection {
  return optionValues(() => selection(layout, flags, maxRowKeyBytes));
}

function selection(layout: TableLayout, flags: ScanFlags, maxRowKeyBytes: number): RowSelection {
  if (flags.eid !== undefined && (flags.startEid !== undefined || flags.endEid !== undefined)) {
    throw new CliError('give either --eid or --start-eid/--end-eid, not both (an entity id selects one row or the rows matching its wildcards)', EXIT_USAGE);
  }
  const limit = parseLimit(flags.limit ?? '-1');
  const read = readSpecOf(layout, flags);
  if (flags.eid === undefined) {
    const start = flags.startEid === undefined ? undefined : boundOf(layout, flags.startEid, maxRowKeyBytes, '--start-eid');
    const end = flags.endEid === undefined ? undefined : boundOf(layout, flags.endEid, maxRowKeyBytes, '--end-eid');
    return { kind: 'scan', request: { start, end, limit, read } };
  }
  const input = REVISION_3.parseEid(flags.eid, layout.keyFormat, true);
  if (input.kind === 'components' && input.components.includes(WILDCARD)) {
    return { kind: 'scan', request: { filter: compileWildcard(layout.keyFormat, input.components), limit, read } };
  }
  return { kind: 'row', rowKey: storableKey(resolveEntityId(layout.keyFormat, input), maxRowKeyBytes, '--eid'), read, limit };
}
