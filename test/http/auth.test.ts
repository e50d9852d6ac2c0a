/**
 * Bearer tokens and read-only mode: every route answered with no token, a wrong token, a token
 * of another instance and a read-only token on a write; listings filtered by scope. The probes of
 * every revision come from its route table (routesFor), so no route can be left out.
 */
import t from 'tap';
import type { Revision } from '../../lib/config/config.js';
import { accessOf, sha256Hex } from '../../lib/http/auth.js';
import { routesFor } from '../../lib/http/routes.js';
import { toHex } from '../../lib/model/keys/binary-text.js';
import { parseLayout } from '../../lib/model/layout/layout.js';
import { encodeRowKey } from '../../lib/model/keys/row-key.js';
import { json, raw, SAMPLE_LAYOUT, startGateway } from './harness.js';

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
  { method: 'GET', path: '/v1/openapi.json', instance: false },
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

/** The hex row key of entity id [1] of sample_table (revision 1's single-row path). */
const HEX_ROW = toHex(encodeRowKey(parseLayout(SAMPLE_LAYOUT).keyFormat, [1n]));

interface RouteProbe extends Probe {
  /** The route template it exercises. */
  readonly template: string;
}

/**
 * One probe per route of the revision's route table, so a route added there is probed here too.
 * A path parameter this function does not know fails the test: say what to put there.
 */
function probesOf(revision: Revision, instance = 'default'): RouteProbe[] {
  const values: Record<string, string> = { instance, table: 'sample_table', hexEntityId: HEX_ROW };
  return routesFor(revision).map((route) => {
    const path = route.path.replace(/:([A-Za-z]+)/g, (_, name: string) => {
      const value = values[name];
      if (value === undefined) throw new Error(`auth.test.ts: no value for :${name} of route ${route.method} ${route.path}; add one to probesOf`);
      return value;
    });
    // POST is the one route with a body; the others take parameters (PUT's are not needed to pass authentication).
    const body = route.method === 'POST' ? JSON.stringify({ ...JSON.parse(ROW), entityId: revision === 3 ? [1] : '[1]' }) : undefined;
    return { method: route.method, path, body, instance: route.path.includes(':instance'), template: route.path };
  });
}

async function errorOf(base: string, p: Probe, headers: Record<string, string>) {
  const res = await raw(base, p.method, p.path, p.body, { ...json, ...headers });
  const body = JSON.parse(res.body || '{}') as { code?: string; exception?: string; status?: number };
  return { res, body };
}

t.test('revision 3: every route refuses a missing or wrong token with 401 and a Bearer challenge', async (t) => {
  const h = await startGateway({ auth: AUTH });
  t.teardown(() => h.close());
  for (const p of [...probesOf(3), { method: 'GET', path: '/v1/nope', instance: false }, { method: 'PATCH', path: TABLE, instance: true }]) {
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

for (const revision of [1, 2, 3] as const) {
  t.test(`revision ${revision}: every route of the route table, with every kind of token`, async (t) => {
    const h = await startGateway({ auth: AUTH, revision });
    t.teardown(() => h.close());
    const probes = probesOf(revision);
    t.same(
      probes.map((p) => `${p.method} ${p.template}`),
      routesFor(revision).map((r) => `${r.method} ${r.path}`),
      'one probe per route',
    );
    for (const p of probes) {
      const what = `${p.method} ${p.template}`;
      const write = accessOf(p.method) === 'write';

      const none = await errorOf(h.base, p, {});
      t.equal(none.res.status, 401, `${what}: no token`);
      t.equal(none.body.code, 'RG_ERR_UNAUTHORIZED');
      t.match(none.res.headers['www-authenticate'], /^Bearer realm="rowgate"$/, `${what}: a Bearer challenge`);

      const wrong = await errorOf(h.base, p, bearer('not-a-configured-token'));
      t.equal(wrong.res.status, 401, `${what}: wrong token`);
      t.equal(wrong.body.code, 'RG_ERR_UNAUTHORIZED');
      t.match(wrong.res.headers['www-authenticate'], /^Bearer realm="rowgate", error="invalid_token"$/);

      // A token of another instance: 403 on everything of this instance, whether it exists or not.
      const other = await errorOf(h.base, p, bearer(TOKENS.other));
      if (p.instance) {
        t.equal(other.res.status, 403, `${what}: another instance's token`);
        t.equal(other.body.code, 'RG_ERR_FORBIDDEN');
        t.match(other.body.exception, new RegExp(`token other has no ${write ? 'write' : 'read'} scope on instance default`));
      } else t.equal(other.res.status, 200, `${what}: outside any instance, any valid token reads`);

      // A read-only token on a write: 403; its reads pass authorization.
      const reader = await errorOf(h.base, p, bearer(TOKENS.reader));
      if (write) {
        t.equal(reader.res.status, 403, `${what}: read-only token on a write`);
        t.equal(reader.body.code, 'RG_ERR_FORBIDDEN');
        t.match(reader.body.exception, /token reader has no write scope on instance default/);
      } else t.notOk([401, 403].includes(reader.res.status), `${what}: the read-only token reads (${reader.res.status})`);

      // A write-only token reading an instance: 403.
      const writer = await errorOf(h.base, p, bearer(TOKENS.writer));
      if (p.instance && !write) t.equal(writer.res.status, 403, `${what}: write-only token reading`);
      else t.notOk([401, 403].includes(writer.res.status), `${what}: write-only token (${writer.res.status})`);

      // The probe reaches its route: with a token allowed everything it is neither refused nor unrouted.
      const admin = await errorOf(h.base, p, bearer(TOKENS.admin));
      t.notOk([401, 403].includes(admin.res.status), `${what}: admin passes (${admin.res.status})`);
      t.notOk(
        ['RG_ERR_ROUTE_NOT_FOUND', 'RG_ERR_METHOD_NOT_ALLOWED'].includes(admin.body.code ?? ''),
        `${what}: the probe hits the route (${admin.res.body.slice(0, 200)})`,
      );
    }

    // An instance hidden by configuration: 404 for a token that may use it, still 403 for one
    // that may not (the scope is checked first, so existence is not revealed).
    const v = await startGateway({ auth: AUTH, revision, instances: ['default'] });
    t.teardown(() => v.close());
    for (const p of probesOf(revision, 'hidden').filter((q) => q.instance)) {
      const what = `${p.method} ${p.path}`;
      const allowed = await errorOf(v.base, p, bearer(TOKENS.other));
      t.equal(allowed.res.status, 404, `${what}: hidden from a token with scope on it`);
      t.equal(allowed.body.code, 'RG_ERR_INSTANCE_NOT_FOUND');
      t.equal((await errorOf(v.base, p, bearer(TOKENS.reader))).res.status, 403, `${what}: a token without scope on it`);
      t.equal((await errorOf(v.base, p, {})).res.status, 401, `${what}: no token`);
    }
  });
}

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
  const pre = await raw(h.base, 'OPTIONS', `${TABLE}/rows`, undefined, {
    origin: 'https://app.example',
    'access-control-request-method': 'POST',
    'access-control-request-headers': 'authorization',
  });
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
  t.equal(
    (await raw(h.base, 'GET', '/v1', undefined, { origin: 'HTTPS://APP.EXAMPLE' })).headers['access-control-allow-origin'],
    'HTTPS://APP.EXAMPLE',
    'origins compare case-insensitively',
  );

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
