/**
 * TLS: `tls: {cert, key}` serves HTTPS with the same handler. The certificate is a throwaway
 * self-signed one made with the openssl command (skipped where it is absent).
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { request as httpRequest } from 'node:http';
import { request as httpsRequest } from 'node:https';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pino } from 'pino';
import t from 'tap';
import { buildConfig } from '../../lib/config/config.js';
import { createGateway } from '../../lib/http/server.js';
import { sha256Hex } from '../../lib/http/auth.js';
import { startGateway } from './harness.js';

const dir = mkdtempSync(join(tmpdir(), 'rowgate-tls-'));
t.teardown(() => rmSync(dir, { recursive: true, force: true }));
const cert = join(dir, 'cert.pem');
const key = join(dir, 'key.pem');
const made = spawnSync(
  'openssl',
  [
    'req',
    '-x509',
    '-newkey',
    'ec',
    '-pkeyopt',
    'ec_paramgen_curve:prime256v1',
    '-nodes',
    '-days',
    '1',
    '-subj',
    '/CN=127.0.0.1',
    '-addext',
    'subjectAltName=IP:127.0.0.1',
    '-keyout',
    key,
    '-out',
    cert,
  ],
  { encoding: 'utf8' },
);
const haveOpenssl = !made.error && made.status === 0;

interface Answer {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: string;
}

function httpsGet(port: number, path: string, headers: Record<string, string> = {}, ca?: string): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const req = httpsRequest({ host: '127.0.0.1', port, path, headers, ca, rejectUnauthorized: ca !== undefined }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks).toString('utf8') }));
      res.on('error', reject);
    });
    req.on('error', reject);
    req.end();
  });
}

t.test('HTTPS serves the same interface', { skip: haveOpenssl ? false : `openssl is not available (${made.error?.message ?? made.stderr})` }, async (t) => {
  const h = await startGateway({ tls: { cert, key }, auth: { tokens: [{ name: 'r', sha256: sha256Hex('tok'), scopes: { '*': 'read' } }] } });
  t.teardown(() => h.close());
  t.equal(h.gateway.protocol, 'https');
  const port = Number(new URL(h.base).port);
  const ca = readFileSync(cert, 'utf8');
  const auth = { authorization: 'Bearer tok' };

  const root = await httpsGet(port, '/v1', auth, ca);
  t.equal(root.status, 200, 'verified against the self-signed certificate');
  t.same(JSON.parse(root.body), { resources: ['version', 'instances', 'openapi.json'], service: 'rowgate' });
  const rows = await httpsGet(port, '/v1/instances/default/tables/sample_table/rows', auth, ca);
  t.equal(rows.status, 200);
  t.equal(rows.body, '');
  const noToken = await httpsGet(port, '/v1', {}, ca);
  t.equal(noToken.status, 401, 'tokens work over TLS');

  // Plain HTTP to the TLS port gets no HTTP answer.
  const plain = await new Promise<string>((resolve) => {
    const req = httpRequest({ host: '127.0.0.1', port, path: '/v1' }, (res) => resolve(`status ${res.statusCode}`));
    req.on('error', (e) => resolve(`error ${(e as NodeJS.ErrnoException).code ?? e.message}`));
    req.end();
  });
  t.match(plain, /^(error|status 400)/, `plain HTTP is not served (${plain})`);
});

t.test('TLS configuration errors name the key', async (t) => {
  t.throws(() => buildConfig({ tls: { cert: join(dir, 'missing.pem'), key } }), /configuration tls\.cert: cannot read/);
  t.throws(() => buildConfig({ tls: { cert } }), /configuration tls\.key: must be a non-empty string/);
  t.throws(() => buildConfig({ tls: { cert, key, ca: 'x' } }), /configuration tls\.ca: unknown key/);
  t.throws(() => buildConfig({ tls: 'yes' }), /configuration tls: must be a mapping/);
  const junk = join(dir, 'junk.pem');
  writeFileSync(junk, 'not a certificate\n');
  const config = buildConfig({ port: 0, tls: { cert: junk, key: junk } });
  t.throws(() => createGateway(config, {} as never, pino({ level: 'silent' })), { code: 'RG_ERR_BAD_CONFIG', message: /configuration tls: cannot use/ });
});
