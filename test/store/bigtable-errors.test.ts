/**
 * The Bigtable error mapping without an emulator: every gRPC status a Bigtable call can fail with
 * becomes a coded error with the right HTTP status, the driver's message only as the cause; and
 * partly failed MutateRows calls become one coded error naming how many rows were not applied.
 */
import t from 'tap';
import { rgError } from '../../lib/errors.js';
import { GRPC, mapBigtableError, mutateFailureError, RETRYABLE } from '../../lib/store/bigtable/bigtable-errors.js';

const DRIVER = 'driver text: 14 UNAVAILABLE: No connection established. Last error: connect ECONNREFUSED';
const grpcError = (code: number | undefined): Error => Object.assign(new Error(`${code} ${DRIVER}`), code === undefined ? {} : { code });

t.test('gRPC status codes -> coded errors; the driver message is only the cause', async (t) => {
  const context = { doing: 'reading rows in table users', instance: 'demo', table: 'users' };
  const cases: [number | undefined, string, number, RegExp][] = [
    [GRPC.NOT_FOUND, 'RG_ERR_TABLE_NOT_FOUND', 404, /^table users not found in instance demo \(no Bigtable table\)$/],
    [GRPC.INVALID_ARGUMENT, 'RG_ERR_BAD_PARAMETER', 400, /rejected the request as invalid \(INVALID_ARGUMENT\)/],
    [GRPC.FAILED_PRECONDITION, 'RG_ERR_BAD_PARAMETER', 400, /FAILED_PRECONDITION/],
    [GRPC.UNAVAILABLE, 'RG_ERR_STORE_UNAVAILABLE', 503, /unavailable or timed out \(UNAVAILABLE\); retry later/],
    [GRPC.DEADLINE_EXCEEDED, 'RG_ERR_STORE_UNAVAILABLE', 503, /\(DEADLINE_EXCEEDED\); retry later/],
    [GRPC.RESOURCE_EXHAUSTED, 'RG_ERR_STORE_UNAVAILABLE', 503, /\(RESOURCE_EXHAUSTED\); retry later/],
    [GRPC.ABORTED, 'RG_ERR_STORE_UNAVAILABLE', 503, /\(ABORTED\); retry later/],
    [GRPC.CANCELLED, 'RG_ERR_STORE_UNAVAILABLE', 503, /\(CANCELLED\); retry later/],
    [GRPC.PERMISSION_DENIED, 'RG_ERR_STORE_REFUSED', 502, /refused the gateway's credentials \(PERMISSION_DENIED\)/],
    [GRPC.UNAUTHENTICATED, 'RG_ERR_STORE_REFUSED', 502, /UNAUTHENTICATED/],
    [GRPC.INTERNAL, 'RG_ERR_INTERNAL', 500, /Bigtable call failed \(INTERNAL\)/],
    [GRPC.ALREADY_EXISTS, 'RG_ERR_INTERNAL', 500, /ALREADY_EXISTS/],
    [12, 'RG_ERR_INTERNAL', 500, /UNIMPLEMENTED/],
    [2, 'RG_ERR_INTERNAL', 500, /UNKNOWN/],
    [99, 'RG_ERR_INTERNAL', 500, /status 99/],
    [undefined, 'RG_ERR_INTERNAL', 500, /no status/],
  ];
  for (const [grpc, code, status, message] of cases) {
    const driver = grpcError(grpc);
    const e = mapBigtableError(driver, context);
    t.equal(e.code, code, `${grpc} -> ${code}`);
    t.equal(e.status, status);
    t.match(e.message, message);
    t.notMatch(e.message, /driver text|ECONNREFUSED/, 'no driver text in the message');
    t.equal(e.cause, driver, 'the driver error is the cause');
  }
  // Every 503 is a retryable condition; the retry set is what the write path retries per entry.
  for (const code of [GRPC.UNAVAILABLE, GRPC.DEADLINE_EXCEEDED, GRPC.RESOURCE_EXHAUSTED, GRPC.ABORTED]) t.ok(RETRYABLE.has(code));
  for (const code of [GRPC.NOT_FOUND, GRPC.INVALID_ARGUMENT, GRPC.INTERNAL, GRPC.PERMISSION_DENIED]) t.notOk(RETRYABLE.has(code));
  // Without a table in the context, NOT_FOUND is about the instance (or the meta table).
  t.equal(mapBigtableError(grpcError(GRPC.NOT_FOUND), { doing: 'listing instances' }).code, 'RG_ERR_INSTANCE_NOT_FOUND');
  // A coded error passes through unchanged.
  const coded = rgError('RG_ERR_BAD_COUNTER', 'overflow');
  t.equal(mapBigtableError(coded, context), coded);
});

t.test('partly failed MutateRows: the count, which rows were applied, the most truthful code, the entry statuses as the cause', async (t) => {
  const key = (s: string): Buffer => Buffer.from(s);
  const doing = 'writing table users';

  const internal = mutateFailureError(
    [
      { rowKey: key('a'), code: GRPC.INTERNAL, message: 'unknown family "tags"' },
      { rowKey: key('b'), code: GRPC.INTERNAL, message: 'unknown family "tags"' },
    ],
    3,
    doing,
  );
  t.equal(internal.code, 'RG_ERR_INTERNAL');
  t.equal(internal.status, 500);
  t.equal(
    internal.message,
    'writing table users: 2 of 3 rows were not applied (the other 1 were); first: row key hex 61, INTERNAL: the Bigtable table does not match the layout or refused them',
  );
  t.notMatch(internal.message, /unknown family/, "Bigtable's text stays out of the message");
  t.equal((internal.cause as Error).message, 'MutateRows entry statuses: INTERNAL: unknown family "tags" (2 rows)');

  const notFound = mutateFailureError([{ rowKey: key('a'), code: GRPC.NOT_FOUND, message: 'Requested column family not found.' }], 1, doing);
  t.equal(notFound.code, 'RG_ERR_INTERNAL', "an entry's NOT_FOUND is a missing family (a missing table fails the whole call), not the client's 404");
  t.match(notFound.message, /^writing table users: 1 of 1 rows were not applied; first: row key hex 61, NOT_FOUND/);

  const invalid = mutateFailureError(
    [
      { rowKey: key('a'), code: GRPC.INVALID_ARGUMENT, message: 'too large' },
      { rowKey: key('b'), code: GRPC.UNAVAILABLE },
    ],
    5,
    doing,
  );
  t.equal(invalid.code, 'RG_ERR_BAD_BODY');
  t.equal(invalid.status, 400);
  t.match(invalid.message, /2 of 5 rows were not applied \(the other 3 were\); first: row key hex 61, INVALID_ARGUMENT: Bigtable rejected them as invalid/);
  t.equal((invalid.cause as Error).message, 'MutateRows entry statuses: INVALID_ARGUMENT: too large (1 row); UNAVAILABLE (1 row)');

  const transient = mutateFailureError(
    [
      { rowKey: key('a'), code: GRPC.UNAVAILABLE, message: 'no status received for the entry' },
      { rowKey: key('b'), code: GRPC.DEADLINE_EXCEEDED },
    ],
    2,
    doing,
  );
  t.equal(transient.code, 'RG_ERR_STORE_UNAVAILABLE');
  t.equal(transient.status, 503);
  t.match(transient.message, /2 of 2 rows were not applied; .*; retry later$/);

  const mixed = mutateFailureError(
    [
      { rowKey: key('z'), code: GRPC.UNAVAILABLE },
      { rowKey: key('y'), code: GRPC.INVALID_ARGUMENT },
      { rowKey: key('x'), code: GRPC.INTERNAL },
    ],
    3,
    doing,
  );
  t.equal(mixed.code, 'RG_ERR_INTERNAL', 'mixed lasting failures: 500');
  t.match(mixed.message, /first: row key hex 79, INVALID_ARGUMENT/, 'the first lasting failure is named, not the transient one');
});
