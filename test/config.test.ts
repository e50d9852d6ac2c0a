/**
 * Configuration: defaults, flags over the file, and every invalid value refused at startup with
 * a message naming its key.
 */
import { writeFileSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import t from 'tap';
import { buildConfig, DEFAULT_LIMITS, loadConfig } from '../lib/config.js';
import { sha256Hex } from '../lib/http/auth.js';

const HASH = sha256Hex('secret');

t.test('defaults', async (t) => {
  const c = buildConfig({});
  t.equal(c.host, '127.0.0.1');
  t.equal(c.port, 8080);
  t.equal(c.revision, 3);
  t.equal(c.cors, false);
  t.equal(c.readOnly, false);
  t.equal(c.auth, undefined, 'no tokens: open');
  t.equal(c.tls, undefined);
  t.same(c.admin, { host: '127.0.0.1', port: 8081, readyTimeoutMs: 2000 });
  t.same(c.limits, DEFAULT_LIMITS);
  t.same(DEFAULT_LIMITS, {
    bodyBytes: 64 * 1024 * 1024,
    urlBytes: 16 * 1024,
    maxLimit: 1_000_000_000,
    maxEids: 10_000,
    maxScans: 64,
    headersTimeoutMs: 10_000,
    requestTimeoutMs: 300_000,
    keepAliveTimeoutMs: 65_000,
    stallTimeoutMs: 60_000,
    maxHeaderBytes: 32 * 1024,
    shutdownGraceMs: 10_000,
  }, 'the documented defaults (README.md, limits)');
});

t.test('valid settings', async (t) => {
  const c = buildConfig({
    readOnly: true,
    cors: { origins: ['https://App.example', 'http://localhost:3000'], credentials: true },
    auth: { tokens: [{ name: 'a', sha256: HASH.toUpperCase(), scopes: { '*': 'read', default: '*', logs: 'write' } }] },
    limits: { maxScans: '8', headersTimeoutMs: 1000 },
  });
  t.equal(c.readOnly, true);
  t.same(c.cors, { origins: ['https://app.example', 'http://localhost:3000'], credentials: true }, 'origins compared case-insensitively');
  t.same(c.auth, { tokens: [{ name: 'a', sha256: HASH, scopes: { '*': 'read', default: '*', logs: 'write' } }] });
  t.equal(c.limits.maxScans, 8);
  t.equal(c.limits.headersTimeoutMs, 1000);
  t.equal(buildConfig({ cors: true }).cors, true);
  t.same(buildConfig({ cors: { origins: ['*'] } }).cors, { origins: ['*'], credentials: false });
  t.equal(buildConfig({ port: 1 }, { port: '0' }).port, 0, 'flags win over the file');
});

t.test('store.scanThreads sets the threads of one large LMDB scan', async (t) => {
  t.same(buildConfig({ store: { kind: 'lmdb', path: '/d', scanThreads: 0 } }).store, { kind: 'lmdb', path: '/d', scanThreads: 0 });
  t.same(buildConfig({ store: { kind: 'lmdb', path: '/d' } }).store, { kind: 'lmdb', path: '/d' }, 'absent: the store picks (cores, at most 4)');
});

t.test('invalid configuration is refused with a message naming the key', async (t) => {
  const cases: [Record<string, unknown>, RegExp][] = [
    [{ nonsense: 1 }, /configuration nonsense: unknown key/],
    [{ port: 70000 }, /configuration port: must be an integer from 0 to 65535/],
    [{ revision: 4 }, /configuration revision:/],
    [{ host: '' }, /configuration host:/],
    [{ readOnly: 'yes' }, /configuration readOnly: must be true or false/],
    [{ logLevel: 'loud' }, /configuration logLevel:/],
    [{ instances: 'default' }, /configuration instances:/],
    // limits
    [{ limits: { bodyBytes: 0 } }, /configuration limits\.bodyBytes: must be an integer/],
    [{ limits: { maxScans: 1.5 } }, /configuration limits\.maxScans:/],
    [{ limits: { maxHeaderBytes: 'big' } }, /configuration limits\.maxHeaderBytes:/],
    [{ limits: { timeoutMs: 5 } }, /configuration limits\.timeoutMs: unknown limit/],
    [{ limits: { headersTimeoutMs: 5000, requestTimeoutMs: 1000 } }, /configuration limits\.headersTimeoutMs: must not exceed limits\.requestTimeoutMs/],
    [{ limits: [] }, /configuration limits: must be a mapping/],
    // cors
    [{ cors: 'yes' }, /configuration cors: must be true, false, or a mapping/],
    [{ cors: { origins: 'https://a.example' } }, /configuration cors\.origins: must be a list/],
    [{ cors: { origins: ['https://a.example/path'] } }, /configuration cors\.origins\[0\]: must be '\*' or an origin/],
    [{ cors: { origins: ['a.example'] } }, /configuration cors\.origins\[0\]:/],
    [{ cors: { origins: ['*'], credentials: true } }, /configuration cors\.origins: '\*' cannot be combined with credentials/],
    [{ cors: { origins: [], credentials: 'yes' } }, /configuration cors\.credentials: must be true or false/],
    [{ cors: { origins: [], methods: [] } }, /configuration cors\.methods: unknown key/],
    // auth
    [{ auth: [] }, /configuration auth: must be a mapping/],
    [{ auth: { tokens: [] } }, /configuration auth\.tokens: is empty/],
    [{ auth: { tokens: {} } }, /configuration auth\.tokens: must be a list/],
    [{ auth: { users: [] } }, /configuration auth\.users: unknown key/],
    [{ auth: { tokens: [{ sha256: HASH, scopes: {} }] } }, /configuration auth\.tokens\[0\]\.name:/],
    [{ auth: { tokens: [{ name: 'a', sha256: 'secret', scopes: {} }] } }, /configuration auth\.tokens\[0\]\.sha256: must be the SHA-256 of the token as 64 hex digits/],
    [{ auth: { tokens: [{ name: 'a', token: 'secret', sha256: HASH, scopes: {} }] } }, /configuration auth\.tokens\[0\]\.token: unknown key/],
    [{ auth: { tokens: [{ name: 'a', sha256: HASH }] } }, /configuration auth\.tokens\[0\]\.scopes: must be a mapping/],
    [{ auth: { tokens: [{ name: 'a', sha256: HASH, scopes: { default: 'admin' } }] } }, /configuration auth\.tokens\[0\]\.scopes\.default: must be read, write or '\*'/],
    [{ auth: { tokens: [{ name: 'a', sha256: HASH, scopes: {} }, { name: 'a', sha256: sha256Hex('x'), scopes: {} }] } }, /configuration auth\.tokens\[1\]\.name: token name "a" is used twice/],
    [{ auth: { tokens: [{ name: 'a', sha256: HASH, scopes: {} }, { name: 'b', sha256: HASH.toUpperCase(), scopes: {} }] } }, /configuration auth\.tokens\[1\]\.sha256: the same token is configured twice/],
    // tls, admin
    [{ tls: { cert: '/no/such/cert.pem', key: '/no/such/key.pem' } }, /configuration tls\.cert: cannot read \/no\/such\/cert\.pem/],
    [{ admin: { port: -1 } }, /configuration admin\.port:/],
    [{ admin: 'on' }, /configuration admin: must be a mapping/],
    [{ admin: { readyTimeoutMs: 0 } }, /configuration admin\.readyTimeoutMs:/],
    // store
    [{ store: { kind: 'lmdb', scanThreads: -1 } }, /configuration store\.scanThreads: must be an integer from 0 to 64/],
    [{ store: { kind: 'lmdb', scanThreads: 'all' } }, /configuration store\.scanThreads:/],
    [{ store: { kind: 'lmdb', threads: 2 } }, /configuration store\.threads: unknown key for kind lmdb \(use path, scanThreads\)/],
  ];
  for (const [file, message] of cases) {
    t.throws(() => buildConfig(file), { code: 'RG_ERR_BAD_CONFIG', message }, JSON.stringify(file));
  }
});

t.test('a YAML file is read and checked the same way', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'rowgate-config-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  const good = join(dir, 'good.yaml');
  writeFileSync(good, `readOnly: true\nauth:\n  tokens:\n    - name: ci\n      sha256: ${HASH}\n      scopes: {default: read}\ncors:\n  origins: [https://app.example]\nadmin: false\n`);
  const c = loadConfig({ config: good });
  t.equal(c.readOnly, true);
  t.equal(c.auth?.tokens[0]?.name, 'ci');
  t.equal(c.admin, false);
  const bad = join(dir, 'bad.yaml');
  writeFileSync(bad, 'limits:\n  maxScans: many\n');
  t.throws(() => loadConfig({ config: bad }), /configuration limits\.maxScans: must be an integer/);
  t.throws(() => loadConfig({ config: join(dir, 'missing.yaml') }), /configuration file: cannot read/);
});
