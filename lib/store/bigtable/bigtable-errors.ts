/**
 * Maps errors from the Bigtable client (gRPC status codes) to the gateway's coded errors. The
 * driver's own message never reaches a client: it is kept as the cause, for the server log.
 */
import { isRowgateError, rgError, type RowgateError } from '../../errors.js';

/** gRPC status codes the mapping distinguishes. */
export const GRPC = {
  CANCELLED: 1,
  INVALID_ARGUMENT: 3,
  DEADLINE_EXCEEDED: 4,
  NOT_FOUND: 5,
  ALREADY_EXISTS: 6,
  PERMISSION_DENIED: 7,
  RESOURCE_EXHAUSTED: 8,
  FAILED_PRECONDITION: 9,
  ABORTED: 10,
  INTERNAL: 13,
  UNAVAILABLE: 14,
  UNAUTHENTICATED: 16,
} as const;

const NAMES: Record<number, string> = {
  1: 'CANCELLED',
  2: 'UNKNOWN',
  3: 'INVALID_ARGUMENT',
  4: 'DEADLINE_EXCEEDED',
  5: 'NOT_FOUND',
  6: 'ALREADY_EXISTS',
  7: 'PERMISSION_DENIED',
  8: 'RESOURCE_EXHAUSTED',
  9: 'FAILED_PRECONDITION',
  10: 'ABORTED',
  11: 'OUT_OF_RANGE',
  12: 'UNIMPLEMENTED',
  13: 'INTERNAL',
  14: 'UNAVAILABLE',
  15: 'DATA_LOSS',
  16: 'UNAUTHENTICATED',
};

/** Codes worth retrying: the call may succeed later (the entry-level MutateRows retry uses them too). */
export const RETRYABLE = new Set<number>([GRPC.DEADLINE_EXCEEDED, GRPC.RESOURCE_EXHAUSTED, GRPC.ABORTED, GRPC.UNAVAILABLE]);

export function grpcCode(e: unknown): number | undefined {
  const code = (e as { code?: unknown } | null)?.code;
  return typeof code === 'number' ? code : undefined;
}

export function statusName(code: number | undefined): string {
  return code === undefined ? 'no status' : (NAMES[code] ?? `status ${code}`);
}

export interface ErrorContext {
  /** What the gateway was doing, for the message: "reading table users of instance demo". */
  readonly doing: string;
  /** Instance and table, when NOT_FOUND means "this Kiji table has no Bigtable table". */
  readonly instance?: string;
  readonly table?: string;
}

/** A coded error for a failed Bigtable call; coded errors pass through unchanged. */
export function mapBigtableError(e: unknown, context: ErrorContext): RowgateError {
  if (isRowgateError(e)) return e;
  const code = grpcCode(e);
  switch (code) {
    case GRPC.NOT_FOUND:
      if (context.table !== undefined) {
        return rgError('RG_ERR_TABLE_NOT_FOUND', `table ${context.table} not found in instance ${context.instance ?? '?'} (no Bigtable table)`, e);
      }
      return rgError('RG_ERR_INSTANCE_NOT_FOUND', `${context.doing}: the Bigtable instance or table does not exist`, e);
    case GRPC.INVALID_ARGUMENT:
    case GRPC.FAILED_PRECONDITION:
      return rgError('RG_ERR_BAD_PARAMETER', `${context.doing}: Bigtable rejected the request as invalid (${statusName(code)})`, e);
    case GRPC.DEADLINE_EXCEEDED:
    case GRPC.UNAVAILABLE:
    case GRPC.RESOURCE_EXHAUSTED:
    case GRPC.ABORTED:
    case GRPC.CANCELLED:
      return rgError('RG_ERR_STORE_UNAVAILABLE', `${context.doing}: Bigtable is unavailable or timed out (${statusName(code)}); retry later`, e);
    case GRPC.PERMISSION_DENIED:
    case GRPC.UNAUTHENTICATED:
      return rgError('RG_ERR_STORE_REFUSED', `${context.doing}: Bigtable refused the gateway's credentials (${statusName(code)})`, e);
    default:
      return rgError('RG_ERR_INTERNAL', `${context.doing}: Bigtable call failed (${statusName(code)})`, e);
  }
}

/** The outcome of one MutateRows entry (bigtable-client.ts answers one per entry). */
export interface EntryStatus {
  readonly code: number;
  /** Bigtable's message for a failed entry (kept as the write error's cause, for the server log). */
  readonly message?: string;
}

/** The status of one MutateRows entry that was not applied. */
export type EntryFailure = EntryStatus & {
  readonly rowKey: Buffer;
};

/**
 * The coded error of a write whose MutateRows entries partly failed. The rows not listed were
 * applied (Bigtable applies each row on its own), and the message says so. The code is the most
 * truthful one for the entries' statuses:
 *
 * - every failure transient (UNAVAILABLE, DEADLINE_EXCEEDED, ...): 503 store unavailable, retry later;
 * - every other failure INVALID_ARGUMENT: 400, Bigtable refused the rows as sent (the gateway checks
 *   families, key and qualifier sizes and timestamps first, so it is a limit of Bigtable's own);
 * - anything else, NOT_FOUND of an entry included (a column family of the layout missing from the
 *   Bigtable table: the table itself missing fails the whole call instead), and the emulator's
 *   INTERNAL for an unknown family: 500, since the gateway's layout and Bigtable disagree.
 *
 * Bigtable's per-entry messages never reach the client: they are the error's cause.
 */
export function mutateFailureError(failures: readonly EntryFailure[], total: number, doing: string): RowgateError {
  const lasting = failures.filter((f) => !RETRYABLE.has(f.code));
  const first = lasting[0] ?? failures[0]!;
  const statuses = new Map<string, number>();
  for (const f of failures) {
    const key = `${statusName(f.code)}${f.message ? `: ${f.message}` : ''}`;
    statuses.set(key, (statuses.get(key) ?? 0) + 1);
  }
  const cause = new Error(`MutateRows entry statuses: ${[...statuses].map(([s, n]) => `${s} (${n} row${n === 1 ? '' : 's'})`).join('; ')}`);
  const applied = total - failures.length;
  const what = `${doing}: ${failures.length} of ${total} rows were not applied${applied > 0 ? ` (the other ${applied} were)` : ''}; first: row key hex ${first.rowKey.toString('hex').slice(0, 64)}, ${statusName(first.code)}`;
  if (lasting.length === 0) return rgError('RG_ERR_STORE_UNAVAILABLE', `${what}; retry later`, cause);
  if (lasting.every((f) => f.code === GRPC.INVALID_ARGUMENT)) return rgError('RG_ERR_BAD_BODY', `${what}: Bigtable rejected them as invalid`, cause);
  return rgError('RG_ERR_INTERNAL', `${what}: the Bigtable table does not match the layout or refused them`, cause);
}
