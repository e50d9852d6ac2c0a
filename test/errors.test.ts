import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import t from 'tap';
import { ERRORS, rgError, type ErrorCode, type ErrorSpec } from '../lib/errors.js';
import { errorHeaders, sendError } from '../lib/http/respond.js';

const codes = Object.keys(ERRORS) as ErrorCode[];

function sources(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    return statSync(path).isDirectory() ? sources(path) : path.endsWith('.ts') && path !== join('lib', 'errors.ts') ? [path] : [];
  });
}

t.test('every registered code builds the documented error body', async (t) => {
  for (const code of codes) {
    const err = rgError(code, `message for ${code}`);
    t.same(Object.keys(err.toBody()), ['exceptionName', 'exception', 'status', 'code'], code);
    t.equal(err.toBody().status, ERRORS[code].status);
    t.ok(err.status >= 400 && err.status < 600, `${code} has an HTTP error status`);
    t.match(code, /^RG_ERR_[A-Z_]+$/);
    t.ok(ERRORS[code].when.length > 10, `${code} says when it is raised`);
  }
  t.equal(rgError('RG_ERR_INTERNAL', 'x').status, 500, 'only the internal error is a 500');
  t.same(
    codes.filter((c) => ERRORS[c].status === 500),
    ['RG_ERR_INTERNAL'],
  );
});

t.test('every code is raised somewhere in lib/ (no dead codes)', async (t) => {
  const text = sources('lib')
    .map((p) => readFileSync(p, 'utf8'))
    .join('\n');
  for (const code of codes) t.ok(text.includes(`'${code}'`), `${code} is used`);
});

t.test('docs/errors.md holds the registry row for row, and the docs name only registered codes', async (t) => {
  const table = readFileSync(join('docs', 'errors.md'), 'utf8');
  for (const code of codes) {
    const spec: ErrorSpec = ERRORS[code];
    const row = `| \`${code}\` | ${spec.status} | ${spec.exceptionName} | ${spec.when} |`;
    t.ok(table.split('\n').includes(row), `docs/errors.md has the row of ${code}: ${row}`);
  }
  const pages = [
    'README.md',
    ...readdirSync('docs')
      .filter((name) => name.endsWith('.md'))
      .map((name) => join('docs', name)),
  ];
  for (const page of pages) {
    const text = readFileSync(page, 'utf8');
    for (const mentioned of new Set(text.match(/RG_ERR_[A-Z_]+/g) ?? [])) t.ok(mentioned in ERRORS, `${mentioned} in ${page} is registered`);
  }
});

t.test('every 503 is retryable: the registry gives it a Retry-After', async (t) => {
  for (const code of codes) {
    const spec: ErrorSpec = ERRORS[code];
    if (spec.status === 503) t.equal(spec.retryAfterSeconds, 1, `${code} (503) carries Retry-After: 1`);
    else t.equal(spec.retryAfterSeconds, undefined, `${code} (${spec.status}) is not retried`);
    const headers = errorHeaders(rgError(code, 'x'));
    t.same(headers, spec.status === 503 ? { 'retry-after': '1' } : {}, `${code}: headers of its response`);
  }
  // Headers a raise site attaches (a 401's challenge) come along.
  const challenged = Object.assign(rgError('RG_ERR_UNAUTHORIZED', 'x'), { headers: { 'www-authenticate': 'Bearer realm="rowgate"' } });
  t.same(errorHeaders(challenged), { 'www-authenticate': 'Bearer realm="rowgate"' });
});

/** The status and headers sendError writes, on a stand-in response. */
function sent(
  err: ReturnType<typeof rgError>,
  complete = true,
  requestHeaders: Record<string, string> = {},
): { status: number; headers: Record<string, string>; body: string } {
  const out = { status: 0, headers: {} as Record<string, string>, body: '' };
  const res = {
    headersSent: false,
    getHeader: () => undefined,
    writeHead(status: number, headers: Record<string, string>) {
      out.status = status;
      out.headers = headers;
      return res;
    },
    end(body: string) {
      out.body = body;
    },
  };
  sendError({ config: { compression: false } }, { complete, headers: requestHeaders } as never, res as never, err);
  return out;
}

t.test('error -> response: a 503 of the store sends Retry-After, a 400 does not', async (t) => {
  const unavailable = sent(rgError('RG_ERR_STORE_UNAVAILABLE', 'Bigtable: UNAVAILABLE'));
  t.equal(unavailable.status, 503);
  t.equal(unavailable.headers['retry-after'], '1');
  t.equal(JSON.parse(unavailable.body).code, 'RG_ERR_STORE_UNAVAILABLE');
  t.equal(unavailable.headers['content-length'], String(Buffer.byteLength(unavailable.body)));
  t.equal(sent(rgError('RG_ERR_TOO_MANY_SCANS', 'x')).headers['retry-after'], '1');
  const bad = sent(rgError('RG_ERR_BAD_LIMIT', 'x'), false, { 'content-length': '12' });
  t.equal(bad.headers['retry-after'], undefined);
  t.equal(bad.headers.connection, 'close', 'an unread body closes the connection');
  t.equal(sent(rgError('RG_ERR_BAD_LIMIT', 'x'), false, { 'transfer-encoding': 'chunked' }).headers.connection, 'close', 'a chunked body too');
  t.equal(
    sent(rgError('RG_ERR_BAD_LIMIT', 'x'), false).headers.connection,
    undefined,
    'a request without a body keeps its connection before node marks it complete',
  );
});
