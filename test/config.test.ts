/**
 * Configuration: defaults, flags over the environment over the file, relative paths in the file
 * resolved against its folder, and every invalid value refused at startup with a message naming
 * its key (or its environment variable).
 */
import { writeFileSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import t from 'tap';
import { buildConfig, DEFAULT_LIMITS, loadConfig } from '../lib/config/config.js';
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
  t.same(
    DEFAULT_LIMITS,
    {
      bodyBytes: 64 * 1024 * 1024,
      urlBytes: 16 * 1024,
      maxLimit: 1_000_000_000,
      maxEids: 10_000,
      maxPostCells: 1_000_000,
      maxScans: 64,
      writeBudgetBytes: 16 * 1024 * 1024,
      headersTimeoutMs: 10_000,
      requestTimeoutMs: 300_000,
      keepAliveTimeoutMs: 65_000,
      stallTimeoutMs: 60_000,
      maxHeaderBytes: 32 * 1024,
      shutdownGraceMs: 10_000,
    },
    'the documented defaults (docs/security.md, "Limits")',
  );
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

t.test('limits: cross-checks, and what the largest accepted values are', async (t) => {
  const max = 2 ** 31 - 1;
  const l = buildConfig({
    limits: { headersTimeoutMs: max, requestTimeoutMs: max, keepAliveTimeoutMs: max, stallTimeoutMs: max, shutdownGraceMs: max },
  }).limits;
  t.same(
    [l.headersTimeoutMs, l.requestTimeoutMs, l.keepAliveTimeoutMs, l.stallTimeoutMs, l.shutdownGraceMs],
    [max, max, max, max, max],
    '2^31-1 ms is accepted',
  );
  t.equal(buildConfig({ limits: { bodyBytes: 2 ** 40 } }).limits.bodyBytes, 2 ** 40, 'sizes are not bound by the timer limit');
  t.equal(buildConfig({ limits: { urlBytes: 32767 } }).limits.urlBytes, 32767, 'urlBytes just below maxHeaderBytes');
  t.equal(buildConfig({ limits: { urlBytes: 20000, maxHeaderBytes: 65536 } }).limits.urlBytes, 20000);
  // Left unset, urlBytes follows a lowered maxHeaderBytes (half of it, as the defaults are).
  t.equal(buildConfig({ limits: { maxHeaderBytes: 4096 } }).limits.urlBytes, 2048);
  t.equal(buildConfig({ limits: { maxHeaderBytes: 65536 } }).limits.urlBytes, 16384, 'a larger head does not raise the URL limit');
  t.equal(buildConfig({ limits: { maxScans: 3 } }).limits.urlBytes, 16384);
  t.equal(buildConfig({ limits: { maxHeaderBytes: 2 } }).limits.urlBytes, 1);
  t.throws(() => buildConfig({ limits: { maxHeaderBytes: 1 } }), /configuration limits\.maxHeaderBytes: must be at least 2/);
});

t.test('the admin port defaults to the main port + 1', async (t) => {
  const port = (file: Record<string, unknown>, flags = {}) => {
    const admin = buildConfig(file, flags).admin;
    return admin === false ? false : admin.port;
  };
  t.equal(port({}), 8081, 'default: 8081 beside 8080, like the original');
  t.equal(port({ port: 9000 }), 9001);
  t.equal(port({}, { port: '8081' }), 8082, 'serve --port 8081 works: its admin listener takes 8082');
  t.equal(port({ port: 8080 }, { port: 8090 }), 8091, 'follows the port the flag sets');
  t.equal(port({ port: 0 }), 0, 'an ephemeral main port gets an ephemeral admin port');
  t.equal(port({ port: 65534 }), 65535);
  t.equal(port({ port: 65535, admin: { port: 9100 } }), 9100, 'port 65535 with an explicit admin.port');
  t.equal(port({ port: 65535, admin: false }), false, 'or without an admin listener');
  t.equal(port({ port: 9000, admin: { port: 8081 } }), 8081, 'an explicit admin.port wins');
  t.equal(port({ port: 9000, admin: { host: '127.0.0.2' } }), 9001, 'a mapping without port gets the default');
  t.equal(port({ port: 9000, admin: { port: null } }), 9001, 'so does an empty port (YAML `port:`)');
  t.equal(port({ port: 9000, admin: true }), 9001);
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
    // urlBytes must stay below maxHeaderBytes, or node's bare 431 answers before the coded 414.
    [{ limits: { urlBytes: 40000 } }, /configuration limits\.urlBytes: must be less than limits\.maxHeaderBytes \(32768\), got 40000: .*431.*414/],
    [{ limits: { urlBytes: 4096, maxHeaderBytes: 4096 } }, /configuration limits\.urlBytes: must be less than limits\.maxHeaderBytes \(4096\), got 4096/],
    [{ limits: { urlBytes: 5000, maxHeaderBytes: 4096 } }, /configuration limits\.urlBytes: must be less than limits\.maxHeaderBytes/],
    // A timer longer than 2^31-1 ms fires after 1 ms in node.
    ...(['headersTimeoutMs', 'requestTimeoutMs', 'keepAliveTimeoutMs', 'stallTimeoutMs', 'shutdownGraceMs'] as const).map(
      (key): [Record<string, unknown>, RegExp] => [
        { limits: { [key]: 2 ** 31, ...(key === 'headersTimeoutMs' ? { requestTimeoutMs: 2 ** 31 - 1 } : {}) } },
        new RegExp(`configuration limits\\.${key}: must be at most 2147483647 \\(2\\^31-1 ms`),
      ],
    ),
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
    [
      { auth: { tokens: [{ name: 'a', sha256: 'secret', scopes: {} }] } },
      /configuration auth\.tokens\[0\]\.sha256: must be the SHA-256 of the token as 64 hex digits/,
    ],
    [{ auth: { tokens: [{ name: 'a', token: 'secret', sha256: HASH, scopes: {} }] } }, /configuration auth\.tokens\[0\]\.token: unknown key/],
    [{ auth: { tokens: [{ name: 'a', sha256: HASH }] } }, /configuration auth\.tokens\[0\]\.scopes: must be a mapping/],
    [
      { auth: { tokens: [{ name: 'a', sha256: HASH, scopes: { default: 'admin' } }] } },
      /configuration auth\.tokens\[0\]\.scopes\.default: must be read, write or '\*'/,
    ],
    [
      {
        auth: {
          tokens: [
            { name: 'a', sha256: HASH, scopes: {} },
            { name: 'a', sha256: sha256Hex('x'), scopes: {} },
          ],
        },
      },
      /configuration auth\.tokens\[1\]\.name: token name "a" is used twice/,
    ],
    [
      {
        auth: {
          tokens: [
            { name: 'a', sha256: HASH, scopes: {} },
            { name: 'b', sha256: HASH.toUpperCase(), scopes: {} },
          ],
        },
      },
      /configuration auth\.tokens\[1\]\.sha256: the same token is configured twice/,
    ],
    // tls, admin
    [{ tls: { cert: '/no/such/cert.pem', key: '/no/such/key.pem' } }, /configuration tls\.cert: cannot read \/no\/such\/cert\.pem/],
    [{ admin: { port: -1 } }, /configuration admin\.port:/],
    [{ admin: 'on' }, /configuration admin: must be a mapping/],
    [{ admin: { readyTimeoutMs: 0 } }, /configuration admin\.readyTimeoutMs:/],
    [{ port: 65535 }, /configuration admin\.port: has no default when port is 65535 \(the default is port \+ 1\): set admin\.port, or admin: false/],
    [{ port: 8081, admin: { port: 8081 } }, /configuration admin\.port: 8081 is the port of the main listener/],
    [{ port: 9000, admin: { port: 9000 } }, /configuration admin\.port: 9000 is the port of the main listener/],
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
  writeFileSync(
    good,
    `readOnly: true\nauth:\n  tokens:\n    - name: ci\n      sha256: ${HASH}\n      scopes: {default: read}\ncors:\n  origins: [https://app.example]\nadmin: false\n`,
  );
  const c = loadConfig({ config: good });
  t.equal(c.readOnly, true);
  t.equal(c.auth?.tokens[0]?.name, 'ci');
  t.equal(c.admin, false);
  const bad = join(dir, 'bad.yaml');
  writeFileSync(bad, 'limits:\n  maxScans: many\n');
  t.throws(() => loadConfig({ config: bad }), /configuration limits\.maxScans: must be an integer/);
  t.throws(() => loadConfig({ config: join(dir, 'missing.yaml') }), /configuration file: cannot read/);
});

t.test('precedence: flags > environment > file > defaults, for every setting the environment gives', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'rowgate-config-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  const fileA = join(dir, 'a.yaml');
  const fileB = join(dir, 'b.yaml');
  writeFileSync(fileA, 'host: 127.0.0.3\nport: 7000\nlogLevel: error\nstore: {kind: lmdb, path: /file/data}\n');
  writeFileSync(fileB, 'port: 7100\n');
  const noEnv = loadConfig({}, {});
  t.same([noEnv.host, noEnv.port, noEnv.logLevel, noEnv.store], ['127.0.0.1', 8080, 'info', { kind: 'lmdb', path: './rowgate-data' }], 'defaults');
  const file = loadConfig({ config: fileA }, {});
  t.same([file.host, file.port, file.logLevel, file.store], ['127.0.0.3', 7000, 'error', { kind: 'lmdb', path: '/file/data' }], 'the file over the defaults');
  const env = { ROWGATE_HOST: '127.0.0.4', ROWGATE_PORT: '7001', ROWGATE_LOG_LEVEL: 'debug', ROWGATE_DATA: '/env/data' };
  const fromEnv = loadConfig({ config: fileA }, env);
  t.same(
    [fromEnv.host, fromEnv.port, fromEnv.logLevel, fromEnv.store],
    ['127.0.0.4', 7001, 'debug', { kind: 'lmdb', path: '/env/data' }],
    'the environment over the file',
  );
  const flags = loadConfig({ config: fileA, host: '127.0.0.5', port: '7002', logLevel: 'warn', data: '/flag/data' }, env);
  t.same(
    [flags.host, flags.port, flags.logLevel, flags.store],
    ['127.0.0.5', 7002, 'warn', { kind: 'lmdb', path: '/flag/data' }],
    'flags over the environment',
  );
  t.equal(loadConfig({}, { ROWGATE_CONFIG: fileB }).port, 7100, 'ROWGATE_CONFIG names the file');
  t.equal(loadConfig({ config: fileA }, { ROWGATE_CONFIG: fileB }).port, 7000, '--config wins over ROWGATE_CONFIG');
  t.equal(loadConfig({}, { PORT: '7003' }).port, 7003, 'PORT, as platforms set it');
  t.equal(loadConfig({}, { PORT: '7003', ROWGATE_PORT: '7004' }).port, 7004, 'ROWGATE_PORT wins over PORT');
  t.equal(loadConfig({}, { PORT: '', ROWGATE_LOG_LEVEL: '' }).port, 8080, 'an empty variable is unset');
  t.equal(
    loadConfig({}, { PORT: '0' }).admin && (loadConfig({}, { PORT: '0' }).admin as { port: number }).port,
    0,
    'the admin port follows a port from the environment',
  );
  t.throws(() => loadConfig({}, { ROWGATE_PORT: 'http' }), {
    code: 'RG_ERR_BAD_CONFIG',
    message: /^environment ROWGATE_PORT: must be an integer from 0 to 65535, got "http"$/,
  });
  t.throws(() => loadConfig({}, { PORT: '70000' }), /^environment PORT: must be an integer/);
  t.throws(
    () => loadConfig({}, { ROWGATE_LOG_LEVEL: 'verbose' }),
    /^environment ROWGATE_LOG_LEVEL: must be one of fatal, error, warn, info, debug, trace, silent/,
  );
  t.throws(() => loadConfig({ logLevel: 'loud' }, {}), /configuration --log-level: must be one of/);
});

t.test('relative paths in the file resolve against its folder; flags and environment against the working directory', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'rowgate-config-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  const file = join(dir, 'rowgate.yaml');
  writeFileSync(join(dir, 'cert.pem'), 'x');
  writeFileSync(file, 'store: {kind: lmdb, path: data}\ntls: {cert: cert.pem, key: ./cert.pem}\n');
  const c = loadConfig({ config: file }, {});
  t.same(c.store, { kind: 'lmdb', path: join(dir, 'data') }, 'store.path');
  t.same(c.tls, { cert: join(dir, 'cert.pem'), key: join(dir, 'cert.pem') }, 'tls files');
  writeFileSync(file, 'data: ../elsewhere\n');
  t.same(loadConfig({ config: file }, {}).store, { kind: 'lmdb', path: resolve(dir, '../elsewhere') }, 'the data key');
  writeFileSync(file, 'store: {kind: lmdb, path: /abs/data}\n');
  t.same(loadConfig({ config: file }, {}).store, { kind: 'lmdb', path: '/abs/data' }, 'an absolute path stays');
  t.same(loadConfig({ config: file, data: 'rel' }, {}).store, { kind: 'lmdb', path: 'rel' }, "--data is the working directory's");
  t.same(loadConfig({ config: file }, { ROWGATE_DATA: 'rel' }).store, { kind: 'lmdb', path: 'rel' }, 'ROWGATE_DATA too');
  writeFileSync(file, 'port: 1\n');
  t.same(loadConfig({ config: file }, {}).store, { kind: 'lmdb', path: './rowgate-data' }, "the default data directory is the working directory's");
});
