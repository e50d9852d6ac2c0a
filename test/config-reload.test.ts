/**
 * planReload: what a SIGHUP applies (live settings) and what it reports as needing a restart.
 */
import t from 'tap';
import { buildConfig } from '../lib/config/config.js';
import { planReload } from '../lib/config/config-reload.js';
import { sha256Hex } from '../lib/http/auth.js';

const tokens = (name: string) => ({ tokens: [{ name, sha256: sha256Hex(name), scopes: { '*': 'read' } }] });

t.test('live settings are applied, restart-only ones kept and listed', async (t) => {
  const running = buildConfig({ port: 8080, auth: tokens('a') });
  const next = buildConfig({
    port: 9090,
    revision: 2,
    store: { kind: 'lmdb', path: '/elsewhere' },
    auth: tokens('b'),
    readOnly: true,
    cors: true,
    logLevel: 'warn',
    limits: { maxScans: 3 },
    instances: ['x'],
    compression: true,
  });
  const plan = planReload(running, next);
  t.same(plan.changed, ['auth', 'readOnly', 'cors', 'limits', 'logLevel', 'instances', 'compression']);
  t.same(plan.ignored, ['port', 'revision', 'store', 'admin']);
  t.equal(plan.config.port, 8080);
  t.equal(plan.config.revision, 3);
  t.same(plan.config.store, running.store);
  t.same(plan.config.admin, running.admin);
  t.equal(plan.config.auth?.tokens[0]?.name, 'b');
  t.equal(plan.config.limits.maxScans, 3);
  t.equal(plan.config.logLevel, 'warn');
});

t.test('an unchanged file changes nothing', async (t) => {
  const c = buildConfig({ auth: tokens('a') });
  t.same(planReload(c, buildConfig({ auth: tokens('a') })), { config: c, changed: [], ignored: [] });
});

t.test('limits.maxHeaderBytes needs a restart; urlBytes stays below the running one', async (t) => {
  const running = buildConfig({});
  const plan = planReload(running, buildConfig({ limits: { maxHeaderBytes: 65536, urlBytes: 40000 } }));
  t.same(plan.ignored, ['limits.maxHeaderBytes', 'limits.urlBytes']);
  t.same(plan.changed, [], 'nothing else in limits changed');
  t.same(plan.config.limits, running.limits);
  const partly = planReload(running, buildConfig({ limits: { maxHeaderBytes: 65536, urlBytes: 20000, maxEids: 5 } }));
  t.same(partly.ignored, ['limits.maxHeaderBytes']);
  t.same(partly.changed, ['limits']);
  t.same([partly.config.limits.maxHeaderBytes, partly.config.limits.urlBytes, partly.config.limits.maxEids], [32768, 20000, 5]);
});
