/**
 * Bearer tokens and read-only mode: every route answered with no token, a wrong token, a token
 * of another instance and a read-only token on a write; listings filtered by scope.
 */
import t from 'tap';
import { sha256Hex } from '../../lib/http/auth.js';
import { json, raw, startGateway } from './harness.js';

const TOKENS = {
  admin: 'admin-secret-token',
  reader: 'reader-secret-token',
  writer: 'writer-secret-token',
  other: 'other-instance-token',
  wild: 'wildcard-reader-token',
};

const AUTH = {
  tokens: [
    { name: 'admin', sha256: sha256Hex(TOKENS.admin), scopes: { '*': '*' } },
    { name: 'reader', sha256: sha256Hex(TOKENS.reader), scopes: { default: 'read' } },
    // Upper-case hex is accepted too.
    { name: 'writer', sha256: sha256Hex(TOKENS.writer).toUpperCase(), scopes: { default: 'write' } },
    { name: 'other', sha256: sha256Hex(TOKENS.other), scopes: { hidden: '*' } },
    // The instance's own entry wins over '*': read on every instance but default, write only on default.
    { name: 'wild', sha256: sha256Hex(TOKENS.wild), scopes: { '*': 'read', default: 'write' } },
  ],
};

const TABLE = '/v1/instances/default/tables/sample_table';
const ROW = JSON.stringify({ entityId: [1], cells: { group_family: { string_qualifier: [{ value: 'x', timestamp: 5 }] } } });

interface Probe {
  readonly method: string;
  readonly path: string;
  readonly body?: string;
  /** Route of an instance (scoped) or not. */
  readonly instance: boolean;
}

const REV3: Probe[] = [
  { method: 'GET', path: '/v1', instance: false },
  { method: 'GET', path: '/v1/version', instance: false },
  { method: 'GET', path: '/v1/instances', instance: false },
  { method: 'GET', path: '/v1/instances/default', instance: true },
  { method: 'GET', path: '/v1/instances/default/tables', instance: true },
  { method: 'GET', path: TABLE, instance: true },
  { method: 'GET', path: `${TABLE}/rows?eid=[1]`, instance: true },
  { method: 'GET', path: `${TABLE}/rows`, instance: true },
  { method: 'POST', path: `${TABLE}/rows`, body: ROW, instance: true },
  { method: 'DELETE', path: `${TABLE}/rows?eid=[2]`, instance: true },
];

const bearer = (token: string) => ({ authorization: `Bearer ${token}` });

async function errorOf(base: string, p: Probe, headers: Record<string, string>) {
  const res = await raw(base, p.method, p.path, p.body, { ...json, ...headers });
  const body = JSON.parse(res.body || '{}') as { code?: string; exception?: string; status?: number };
  return { res, body };
}

t.test('revision 3: every route refuses a missing or wrong token with 401 and a Bearer challenge', async (t) => {
  const h = await startGateway({ auth: AUTH });
  t.teardown(() => h.close());
  for (const p of [...REV3, { method: 'GET', path: '/v1/nope', instance: false }, { method: 'PATCH', path: TABLE, instance: true }]) {
    for (const [label, headers] of [
      ['no token', {}],
      ['wrong token', bearer('not-a-configured-token')],
      ['empty bearer', { authorization: 'Bearer ' }],
      ['basic scheme', { authorization: `Basic ${Buffer.from('a:b').toString('base64')}` }],
      ['token of admin but wrong case of a char', bearer(TOKENS.admin.toUpperCase())],
    ] as const) {
      const { res, body } = await errorOf(h.base, p, headers);
      t.equal(res.status, 401, `${p.method} ${p.path} with ${label}: ${res.body}`);
      t.equal(body.code, 'RG_ERR_UNAUTHORIZED');
      t.match(res.headers['www-authenticate'], /^Bearer realm="rowgate"/);
    }
  }
  const { res } = await errorOf(h.base, REV3[0]!, bearer('nope'));
  t.match(res.headers['www-authenticate'], /error="invalid_token"/, 'an unknown token is named invalid_token');
});

t.test('revision 3: scopes per instance', async (t) => {
  const h = await startGateway({ auth: AUTH });
  t.teardown(() => h.close());

  for (const p of REV3) {
    const admin = await errorOf(h.base, p, bearer(TOKENS.admin));
    t.ok(admin.res.status < 300, `admin: ${p.method} ${p.path} -> ${admin.res.status} ${admin.res.body}`);

    // A token of another instance: 403 on everything of this instance, fine elsewhere.
    const other = await errorOf(h.base, p, bearer(TOKENS.other));
    if (p.instance) {
      t.equal(other.res.status, 403, `other instance's token: ${p.method} ${p.path}`);
      t.equal(other.body.code, 'RG_ERR_FORBIDDEN');
      t.match(other.body.exception, /token other has no (read|write) scope on instance default/);
    } else t.equal(other.res.status, 200, `other instance's token: ${p.method} ${p.path}`);

    // A read-only token: reads pass, writes are 403.
    const reader = await errorOf(h.base, p, bearer(TOKENS.reader));
    if (p.method === 'GET') t.equal(reader.res.status, 200, `reader: ${p.method} ${p.path}: ${reader.res.body}`);
    else {
      t.equal(reader.res.status, 403, `reader on a write: ${p.method} ${p.path}`);
      t.equal(reader.body.code, 'RG_ERR_FORBIDDEN');
      t.match(reader.body.exception, /no write scope on instance default/);
    }

    // A write-only token: writes pass, instance reads are 403.
    const writer = await errorOf(h.base, p, bearer(TOKENS.writer));
    if (p.method !== 'GET') t.equal(writer.res.status, 200, `writer: ${p.method} ${p.path}: ${writer.res.body}`);
    else if (p.instance) t.equal(writer.res.status, 403, `writer reading: ${p.path}`);
    else t.equal(writer.res.status, 200, `writer reading a non-instance resource: ${p.path}`);
  }

  // 404s after authentication: routes and instances the token may see.
  t.equal((await raw(h.base, 'GET', '/v1/nope', undefined, bearer(TOKENS.reader))).status, 404);
  t.equal((await raw(h.base, 'GET', '/v1/instances/default/tables/nope', undefined, bearer(TOKENS.reader))).status, 404);
  // An instance outside the scope is 403 whether it exists or not: existence is not revealed.
  for (const name of ['hidden', 'no_such_instance']) {
    const res = await raw(h.base, 'GET', `/v1/instances/${name}/tables`, undefined, bearer(TOKENS.reader));
    t.equal(res.status, 403, `reader on ${name}`);
  }
  t.equal((await raw(h.base, 'GET', '/v1/instances/no_such_instance', undefined, bearer(TOKENS.admin))).status, 404, 'admin sees the real 404');
});

t.test('/v1/instances lists only the instances a token can read', async (t) => {
  const h = await startGateway({ auth: AUTH });
  t.teardown(() => h.close());
  const names = async (token: string) =>
    (JSON.parse((await raw(h.base, 'GET', '/v1/instances', undefined, bearer(token))).body) as { name: string }[]).map((i) => i.name);
  t.same(await names(TOKENS.admin), ['default', 'hidden']);
  t.same(await names(TOKENS.reader), ['default']);
  t.same(await names(TOKENS.writer), [], 'write-only: nothing readable');
  t.same(await names(TOKENS.other), ['hidden']);
  t.same(await names(TOKENS.wild), ['hidden'], "the instance's own entry (write) overrides '*' (read)");
  t.equal((await raw(h.base, 'GET', '/v1/instances/default', undefined, bearer(TOKENS.wild))).status, 403);
  t.equal((await raw(h.base, 'GET', '/v1/instances/hidden', undefined, bearer(TOKENS.wild))).status, 200);

  // Visibility configuration still applies on top.
  const v = await startGateway({ auth: AUTH, instances: ['default'] });
  t.teardown(() => v.close());
  t.same(JSON.parse((await raw(v.base, 'GET', '/v1/instances', undefined, bearer(TOKENS.admin))).body), [{ name: 'default', uri: '/v1/instances/default' }]);
  t.equal((await raw(v.base, 'GET', '/v1/instances/hidden', undefined, bearer(TOKENS.admin))).status, 404);
});

t.test('revision 1: the single-row and entityId routes are scoped too', async (t) => {
  const h = await startGateway({ auth: AUTH, revision: 1 });
  t.teardown(() => h.close());
  const hex = '00';
  const routes: Probe[] = [
    { method: 'GET', path: `${TABLE}/entityId?eid=[1]`, instance: true },
    { method: 'GET', path: `${TABLE}/rows/${hex}`, instance: true },
    { method: 'PUT', path: `${TABLE}/rows/${hex}`, instance: true, body: '{}' },
  ];
  for (const p of routes) {
    t.equal((await errorOf(h.base, p, {})).res.status, 401, `${p.method} ${p.path}: no token`);
    t.equal((await errorOf(h.base, p, bearer('wrong'))).res.status, 401, `${p.method} ${p.path}: wrong token`);
    t.equal((await errorOf(h.base, p, bearer(TOKENS.other))).res.status, 403, `${p.method} ${p.path}: other instance`);
    if (p.method !== 'GET') t.equal((await errorOf(h.base, p, bearer(TOKENS.reader))).res.status, 403, `${p.method} ${p.path}: read-only token`);
    else t.not((await errorOf(h.base, p, bearer(TOKENS.reader))).res.status, 403, `${p.method} ${p.path}: reader may read`);
  }
});

t.test('a rejected write changes nothing', async (t) => {
  const h = await startGateway({ auth: AUTH });
  t.teardown(() => h.close());
  const res = await raw(h.base, 'POST', `${TABLE}/rows`, ROW, { ...json, ...bearer(TOKENS.reader) });
  t.equal(res.status, 403);
  const rows = await raw(h.base, 'GET', `${TABLE}/rows`, undefined, bearer(TOKENS.reader));
  t.equal(rows.body, '', 'table still empty');
});

t.test('read-only mode refuses every write with 403 naming the mode', async (t) => {
  const h = await startGateway({ readOnly: true });
  t.teardown(() => h.close());
  for (const p of REV3) {
    const { res, body } = await errorOf(h.base, p, {});
    if (p.method === 'GET') t.equal(res.status, 200, `${p.method} ${p.path}`);
    else {
      t.equal(res.status, 403, `${p.method} ${p.path}`);
      t.equal(body.code, 'RG_ERR_FORBIDDEN');
      t.match(body.exception, /read-only mode/);
    }
  }
  const r1 = await startGateway({ readOnly: true, revision: 1 });
  t.teardown(() => r1.close());
  const put = await raw(r1.base, 'PUT', `${TABLE}/rows/00`, '{}', json);
  t.equal(put.status, 403);
  t.equal(JSON.parse(put.body).code, 'RG_ERR_FORBIDDEN');
  t.equal((await raw(h.base, 'GET', `${TABLE}/rows`)).body, '', 'nothing written');
});

t.test('tokens and CORS preflight: preflight needs no token', async (t) => {
  const h = await startGateway({ auth: AUTH, cors: { origins: ['https://app.example'] } });
  t.teardown(() => h.close());
  const pre = await raw(h.base, 'OPTIONS', `${TABLE}/rows`, undefined, { origin: 'https://app.example', 'access-control-request-method': 'POST', 'access-control-request-headers': 'authorization' });
  t.equal(pre.status, 204);
  t.match(pre.headers['access-control-allow-headers'], /Authorization/);
  const denied = await raw(h.base, 'GET', '/v1', undefined, { origin: 'https://app.example' });
  t.equal(denied.status, 401);
  t.equal(denied.headers['access-control-allow-origin'], 'https://app.example', 'errors carry CORS headers so the browser can read them');
});

t.test('CORS allow-list: listed origins echoed, others get nothing, preflight answered', async (t) => {
  const h = await startGateway({ cors: { origins: ['https://app.example', 'http://localhost:3000'], credentials: true } });
  t.teardown(() => h.close());
  const listed = await raw(h.base, 'GET', '/v1', undefined, { origin: 'https://app.example' });
  t.equal(listed.status, 200);
  t.equal(listed.headers['access-control-allow-origin'], 'https://app.example', 'a listed origin is echoed');
  t.equal(listed.headers['access-control-allow-credentials'], 'true');
  t.match(listed.headers.vary, /Origin/);
  t.match(listed.headers['access-control-expose-headers'], /Retry-After/);
  t.equal((await raw(h.base, 'GET', '/v1', undefined, { origin: 'HTTPS://APP.EXAMPLE' })).headers['access-control-allow-origin'], 'HTTPS://APP.EXAMPLE', 'origins compare case-insensitively');

  for (const origin of ['https://evil.example', 'https://app.example.evil.example', 'null', 'https://app.example:8443']) {
    const res = await raw(h.base, 'GET', '/v1', undefined, { origin });
    t.equal(res.status, 200, 'the request itself is served (CORS is for browsers)');
    t.equal(res.headers['access-control-allow-origin'], undefined, `${origin} is not reflected`);
    t.equal(res.headers['access-control-allow-credentials'], undefined);
    const pre = await raw(h.base, 'OPTIONS', `${TABLE}/rows`, undefined, { origin, 'access-control-request-method': 'POST' });
    t.equal(pre.status, 204);
    t.equal(pre.headers['access-control-allow-origin'], undefined, `preflight from ${origin} is not allowed`);
    t.equal(pre.headers['access-control-allow-methods'], undefined);
  }
  const noOrigin = await raw(h.base, 'GET', '/v1');
  t.equal(noOrigin.headers['access-control-allow-origin'], undefined, 'never * with credentials');

  const pre = await raw(h.base, 'OPTIONS', `${TABLE}/rows`, undefined, { origin: 'http://localhost:3000', 'access-control-request-method': 'DELETE' });
  t.equal(pre.status, 204);
  t.equal(pre.headers['access-control-allow-origin'], 'http://localhost:3000');
  t.equal(pre.headers['access-control-allow-credentials'], 'true');
  t.match(pre.headers['access-control-allow-methods'], /DELETE/);
  t.match(pre.headers['access-control-allow-headers'], /Authorization/);
  t.equal(pre.headers['access-control-max-age'], '1800');
});

t.test('CORS: * without credentials; read-only preflight offers only GET; off = no headers', async (t) => {
  const any = await startGateway({ cors: { origins: ['*'] }, readOnly: true });
  t.teardown(() => any.close());
  const res = await raw(any.base, 'GET', '/v1', undefined, { origin: 'https://whoever.example' });
  t.equal(res.headers['access-control-allow-origin'], '*');
  t.equal(res.headers['access-control-allow-credentials'], undefined);
  const pre = await raw(any.base, 'OPTIONS', `${TABLE}/rows`, undefined, { origin: 'https://whoever.example', 'access-control-request-method': 'POST' });
  t.equal(pre.headers['access-control-allow-methods'], 'GET,OPTIONS');

  const legacy = await startGateway({ cors: true });
  t.teardown(() => legacy.close());
  const l = await raw(legacy.base, 'GET', '/v1', undefined, { origin: 'https://whoever.example' });
  t.equal(l.headers['access-control-allow-origin'], '*', 'cors: true keeps answering *');
  t.equal(l.headers['access-control-allow-credentials'], undefined);

  const off = await startGateway();
  t.teardown(() => off.close());
  const o = await raw(off.base, 'GET', '/v1', undefined, { origin: 'https://whoever.example' });
  t.equal(o.headers['access-control-allow-origin'], undefined);
  t.equal((await raw(off.base, 'OPTIONS', '/v1')).status, 405, 'without CORS, OPTIONS is an ordinary unrouted method');
});
