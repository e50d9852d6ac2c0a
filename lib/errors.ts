/**
 * The one registry of coded errors. Every error a client can see has a stable `RG_ERR_*` code,
 * an HTTP status and the Java-style exception name the original gateway's clients read
 * (`exceptionName`). Messages are written where the error is raised and must name the bad input.
 *
 * Keep docs/errors.md's table in sync: test/errors.test.ts checks that it holds every code here, row for row.
 */

export interface ErrorSpec {
  readonly status: number;
  readonly exceptionName: string;
  /** One line for the docs: when this error is raised. */
  readonly when: string;
  /**
   * Retryable: the response carries `Retry-After` with this many seconds. Every 503 is (a test
   * checks it): the condition is transient and a client should come back, not give up.
   */
  readonly retryAfterSeconds?: number;
}

/**
 * Retry-After of the 503s. One second: a scan slot frees as soon as any running scan ends, and a
 * store outage is either over quickly or lasts long enough that the client's own backoff on
 * repeated 503s takes over; a longer fixed wait would only stall clients when it is brief.
 */
const RETRY_AFTER_SECONDS = 1;

export const ERRORS = {
  // 400: bad input in a request parameter or body.
  RG_ERR_BAD_ENTITY_ID: { status: 400, exceptionName: 'EntityIdException', when: 'an entity id is malformed or does not fit the table key format' },
  RG_ERR_WILDCARD_NOT_ALLOWED: {
    status: 400,
    exceptionName: 'EntityIdException',
    when: 'a wildcard [] component is used where only a complete entity id is accepted',
  },
  RG_ERR_BAD_ROW_KEY: {
    status: 400,
    exceptionName: 'EntityIdException',
    when: 'a row key (hex or escaped text) is malformed or cannot be decoded with the table key format',
  },
  RG_ERR_ROW_KEY_TOO_LONG: { status: 400, exceptionName: 'EntityIdException', when: 'a row key is longer than the store accepts' },
  RG_ERR_BAD_LAYOUT: { status: 400, exceptionName: 'InvalidLayoutException', when: 'a table layout is malformed or invalid' },
  RG_ERR_BAD_COLUMNS: { status: 400, exceptionName: 'IllegalArgumentException', when: 'the cols parameter is malformed or names an unknown family or column' },
  RG_ERR_BAD_VERSIONS: { status: 400, exceptionName: 'IllegalArgumentException', when: 'versions is not a positive integer or "all"' },
  RG_ERR_BAD_TIMERANGE: {
    status: 400,
    exceptionName: 'IllegalArgumentException',
    when: 'timerange is not min..max with min < max, or a bound is beyond 2^63-1',
  },
  RG_ERR_BAD_LIMIT: { status: 400, exceptionName: 'IllegalArgumentException', when: 'limit is not an integer >= -1, or exceeds the configured maximum' },
  RG_ERR_BAD_TIMESTAMP: {
    status: 400,
    exceptionName: 'IllegalArgumentException',
    when: 'a timestamp is not an integer of milliseconds from 0 to 2^63-1 (on Bigtable: to 9223372036854775); a POST cell at -1 is skipped, not refused',
  },
  RG_ERR_BAD_PARAMETER: {
    status: 400,
    exceptionName: 'IllegalArgumentException',
    when: 'a query parameter is unknown to the served revision, repeated, or malformed',
  },
  RG_ERR_AMBIGUOUS_REQUEST: {
    status: 400,
    exceptionName: 'IllegalArgumentException',
    when: 'more than one of eid, eids and start_eid/end_eid is given, or none where one is required',
  },
  RG_ERR_BAD_BODY: { status: 400, exceptionName: 'JsonParseException', when: 'the request body is not valid JSON or not the expected shape' },
  RG_ERR_UNKNOWN_COLUMN: { status: 400, exceptionName: 'IllegalArgumentException', when: 'a written cell names a family or column the layout does not have' },
  RG_ERR_BAD_VALUE: { status: 400, exceptionName: 'AvroTypeException', when: 'a cell value does not match its writer schema' },
  RG_ERR_BAD_SCHEMA: {
    status: 400,
    exceptionName: 'SchemaParseException',
    when: 'a writer schema is not a valid Avro schema, or cannot be read with the column schema',
  },
  RG_ERR_UNKNOWN_SCHEMA_ID: { status: 400, exceptionName: 'IllegalArgumentException', when: 'a writer_schema id is not in the instance schema table' },
  RG_ERR_BAD_COUNTER: {
    status: 400,
    exceptionName: 'IllegalArgumentException',
    when: 'a counter value or increment is not a 64-bit integer, or an increment carries a timestamp',
  },
  RG_ERR_BAD_HTTP_REQUEST: {
    status: 400,
    exceptionName: 'BadRequestException',
    when: "the request is not valid HTTP/1.1 (request line, header, chunked framing, Content-Length with Transfer-Encoding, no Host in HTTP/1.1), as node's parser found, or is a CONNECT (no proxy here); the connection is closed",
  },
  RG_ERR_BAD_CONFIG: { status: 400, exceptionName: 'ConfigurationException', when: 'the configuration file or a command-line flag is invalid' },
  // 401/403: access.
  RG_ERR_UNAUTHORIZED: {
    status: 401,
    exceptionName: 'NotAuthorizedException',
    when: 'no bearer token, or an unknown one, was given where tokens are configured',
  },
  RG_ERR_FORBIDDEN: { status: 403, exceptionName: 'ForbiddenException', when: 'the token lacks the scope for the instance, or the server is read-only' },
  // 404/405/409.
  RG_ERR_INSTANCE_NOT_FOUND: { status: 404, exceptionName: 'KijiNotInstalledException', when: 'the instance does not exist or is not visible' },
  RG_ERR_TABLE_NOT_FOUND: { status: 404, exceptionName: 'KijiTableNotFoundException', when: 'the table does not exist in the instance' },
  RG_ERR_ROUTE_NOT_FOUND: { status: 404, exceptionName: 'NotFoundException', when: 'no route of the served revision matches the path' },
  RG_ERR_METHOD_NOT_ALLOWED: { status: 405, exceptionName: 'MethodNotAllowedException', when: 'the route exists but not for this method' },
  RG_ERR_INSTANCE_EXISTS: { status: 409, exceptionName: 'KijiAlreadyExistsException', when: 'creating an instance that already exists' },
  RG_ERR_TABLE_EXISTS: { status: 409, exceptionName: 'KijiAlreadyExistsException', when: 'creating a table that already exists' },
  // 408: the client was too slow to send.
  RG_ERR_REQUEST_TIMEOUT: {
    status: 408,
    exceptionName: 'RequestTimeoutException',
    when: 'the request head did not arrive within limits.headersTimeoutMs, or the whole request within limits.requestTimeoutMs; the connection is closed',
  },
  // 413/414/415/417/431.
  RG_ERR_BODY_TOO_LARGE: {
    status: 413,
    exceptionName: 'RequestEntityTooLargeException',
    when: "the request body exceeds the configured limit (or its chunk extensions node's 16 KiB)",
  },
  RG_ERR_TOO_MANY_CELLS: { status: 413, exceptionName: 'RequestEntityTooLargeException', when: 'a POST body holds more cells than limits.maxPostCells allows' },
  RG_ERR_URL_TOO_LONG: { status: 414, exceptionName: 'RequestUriTooLongException', when: 'the request URL exceeds the configured limit' },
  RG_ERR_NOT_ACCEPTABLE: {
    status: 406,
    exceptionName: 'NotAcceptableException',
    when: 'GET rows with an Accept header naming none of application/json, application/x-ndjson, application/avro',
  },
  RG_ERR_UNSUPPORTED_MEDIA_TYPE: {
    status: 415,
    exceptionName: 'UnsupportedMediaTypeException',
    when: 'a body is sent with a content type other than application/json, or a charset other than UTF-8',
  },
  RG_ERR_UNSUPPORTED_CONTENT_ENCODING: {
    status: 415,
    exceptionName: 'UnsupportedMediaTypeException',
    when: 'a body is sent with a Content-Encoding (gzip, deflate, ...): bodies are read as sent, uncompressed; the answer carries Accept-Encoding: identity',
  },
  RG_ERR_EXPECTATION_FAILED: { status: 417, exceptionName: 'ExpectationFailedException', when: 'the Expect header asks for something other than 100-continue' },
  RG_ERR_HEADERS_TOO_LARGE: {
    status: 431,
    exceptionName: 'RequestHeaderFieldsTooLargeException',
    when: 'the request line and headers exceed limits.maxHeaderBytes; the connection is closed',
  },
  // 5xx: never the client's fault.
  RG_ERR_TOO_MANY_SCANS: {
    status: 503,
    exceptionName: 'ServiceUnavailableException',
    when: 'the configured maximum of concurrent scans is reached (retry later)',
    retryAfterSeconds: RETRY_AFTER_SECONDS,
  },
  RG_ERR_TOO_MANY_WRITES: {
    status: 503,
    exceptionName: 'ServiceUnavailableException',
    when: 'POST bodies in flight would exceed limits.writeBudgetBytes: nothing of the request was written (retry later)',
    retryAfterSeconds: RETRY_AFTER_SECONDS,
  },
  RG_ERR_STORE_UNAVAILABLE: {
    status: 503,
    exceptionName: 'ServiceUnavailableException',
    when: 'the store cannot be reached or timed out, or was closed under a running scan as the gateway stops (retry later)',
    retryAfterSeconds: RETRY_AFTER_SECONDS,
  },
  // Not retryable: the store refuses the gateway's own credentials, a deployment fault to fix, not wait out.
  // Not retried automatically: space is freed by an operator, not by waiting; writes work again at once then.
  RG_ERR_STORE_FULL: {
    status: 507,
    exceptionName: 'InsufficientStorageException',
    when: "the store's disk (or LMDB map) is full, or the write would leave the embedded store's device less than 1 MiB free: nothing of the request was written; reads keep working and writes work again once space is freed",
  },
  RG_ERR_STORE_REFUSED: {
    status: 502,
    exceptionName: 'BadGatewayException',
    when: "the store refused the gateway's credentials (fix the deployment; retrying will not help)",
  },
  RG_ERR_INTERNAL: { status: 500, exceptionName: 'InternalServerError', when: 'a bug: the gateway failed in a way it did not foresee' },
} as const satisfies Record<string, ErrorSpec>;

export type ErrorCode = keyof typeof ERRORS;

/** An error with a stable code; everything thrown towards a client should be one of these. */
export class RowgateError extends Error {
  readonly code: ErrorCode;
  readonly status: number;
  readonly exceptionName: string;
  /** Sent as `Retry-After` (from the registry: the code is retryable). */
  readonly retryAfterSeconds?: number;
  /** Response headers the raise site adds, e.g. the WWW-Authenticate challenge of a 401. */
  headers?: Readonly<Record<string, string>>;

  constructor(code: ErrorCode, message: string, options?: { cause?: unknown }) {
    super(message, options);
    const spec: ErrorSpec = ERRORS[code];
    this.name = 'RowgateError';
    this.code = code;
    this.status = spec.status;
    this.exceptionName = spec.exceptionName;
    if (spec.retryAfterSeconds !== undefined) this.retryAfterSeconds = spec.retryAfterSeconds;
  }

  /** The JSON error body (docs/errors.md): the original's fields plus the stable code; never a stack. */
  toBody(): { exceptionName: string; exception: string; status: number; code: ErrorCode } {
    return { exceptionName: this.exceptionName, exception: this.message, status: this.status, code: this.code };
  }
}

/** Shorthand used at raise sites: `throw rgError('RG_ERR_BAD_LIMIT', 'limit must be ...')`. */
export function rgError(code: ErrorCode, message: string, cause?: unknown): RowgateError {
  return new RowgateError(code, message, cause === undefined ? undefined : { cause });
}

export function isRowgateError(e: unknown): e is RowgateError {
  return e instanceof RowgateError;
}
