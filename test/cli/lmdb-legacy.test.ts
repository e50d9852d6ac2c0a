/**
 * Data directories written by earlier releases still open, and every read answers byte for byte
 * what that release answered. Two fixtures, made by make-legacy-fixture.mjs with their release:
 * test/fixtures/legacy, by the release before compact rows (cell entries only), and
 * test/fixtures/format1, by the last release whose compact rows held their revision 3 response
 * (format 1; the store now keeps cells only, compact-row.ts). For each (106 recorded responses over revisions 1-3: scans with
 * versions, cols, time ranges and limits, point and bulk gets, deleted rows, counters, TTL
 * families, a 3,000-qualifier row, row keys and qualifiers with 00 bytes, wildcard scans):
 *
 * - served as it is (legacy rows through the cell path);
 * - after upgradeTable (what `serve` runs at start-up), with every row in exactly one form and the
 *   wide row spilled;
 * - after writes to legacy rows (which turn them compact), the same as the same writes after an
 *   upgrade;
 * - and `rowgate serve` upgrades it at start-up, saying so, then serves the same bytes.
 */
import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import t, { type Test } from 'tap';
import { LmdbStore } from '../../lib/store/lmdb/lmdb-store.js';
import { startGatewayOver, type Harness } from '../http/harness.js';
import { ensureBuilt, serveCli } from './helpers.js';
import { legacyRequests } from '../fixtures/legacy/legacy-spec.mjs';
import { rowForms } from '../store/row-forms.js';
import { repoPath } from '../support/repo-root.js';

const FIXTURES = repoPath('test', 'fixtures');
const TABLES = ['users', 'ttl', 'wide', 'players'];
type Recorded = Record<string, { sha256: string; bytes: number; body?: string }>;

interface Fixture {
  readonly name: string;
  readonly what: string;
  /** Rows stored compact after someWrites, where the directory was written: legacy rows turn compact only when written. */
  readonly compactAfterWrites: (forms: { rows: number; compact: number; spilled: number }) => boolean;
}

const EACH: readonly Fixture[] = [
  { name: 'legacy', what: 'the release before compact rows', compactAfterWrites: (f) => f.compact === 5 + 1 },
  { name: 'format1', what: 'the last release of compact rows in format 1', compactAfterWrites: (f) => f.compact === f.rows - f.spilled },
];

for (const fixture of EACH) {
  const FIXTURE = join(FIXTURES, fixture.name);
  const RECORDED = JSON.parse(readFileSync(join(FIXTURE, 'responses.json'), 'utf8')) as Recorded;

  /** A fresh copy of the fixture's data directory; removed at teardown. */
  function legacyCopy(t: Test): string {
    const top = mkdtempSync(join(tmpdir(), 'rowgate-legacy-'));
    t.teardown(() => rmSync(top, { recursive: true, force: true }));
    const r = spawnSync('tar', ['-xzf', join(FIXTURE, 'data.tar.gz'), '-C', top], { encoding: 'utf8' });
    if (r.status !== 0) throw new Error(`tar failed: ${r.stderr}`);
    return join(top, 'data');
  }

  async function gateways(store: LmdbStore): Promise<Record<number, Harness>> {
    const out: Record<number, Harness> = {};
    for (const revision of [1, 2, 3]) out[revision] = await startGatewayOver(store, { revision });
    return out;
  }

  async function responses(base: (revision: number) => string, revisions = [1, 2, 3]): Promise<Map<string, string>> {
    const out = new Map<string, string>();
    for (const revision of revisions) {
      for (const path of legacyRequests(revision)) {
        const res = await fetch(`${base(revision)}/v1/instances/legacy/tables/${path}`);
        out.set(`${revision} ${path}`, `${res.status} ${await res.text()}`);
      }
    }
    return out;
  }

  /** Every response equals the one the release before compact rows gave (status 200, same bytes). */
  function sameAsRecorded(t: Test, got: Map<string, string>, label: string): void {
    let mismatches = 0;
    for (const [request, recorded] of Object.entries(RECORDED)) {
      const answer = got.get(request);
      const body = answer?.startsWith('200 ') ? answer.slice(4) : undefined;
      const sha = body === undefined ? undefined : createHash('sha256').update(body).digest('hex');
      if (sha === recorded.sha256) continue;
      mismatches++;
      if (recorded.body !== undefined) t.equal(answer, `200 ${recorded.body}`, `${label}: ${request}`);
      else t.fail(`${label}: ${request}: ${answer?.slice(0, 200)} (${answer?.length} chars, recorded ${recorded.bytes} bytes)`);
    }
    t.equal(got.size, Object.keys(RECORDED).length, `${label}: every recorded request was asked`);
    t.equal(mismatches, 0, `${label}: all ${Object.keys(RECORDED).length} responses byte-identical to ${fixture.what}`);
  }

  async function withGateways<T>(store: LmdbStore, fn: (base: (revision: number) => string) => Promise<T>): Promise<T> {
    const g = await gateways(store);
    try {
      return await fn((revision) => g[revision]!.base);
    } finally {
      for (const h of Object.values(g)) await h.close();
    }
  }

  t.test(`${fixture.name}: served as written by ${fixture.what}, then upgraded: the same bytes, every row in one form`, async (t) => {
    const dir = legacyCopy(t);
    const store = new LmdbStore({ path: dir, noSync: true, scanThreads: 0 });
    t.same(
      store
        .legacyTables()
        .map((x) => x.table)
        .sort(),
      [...TABLES].sort(),
      'every table of the old directory may hold rows of the earlier release',
    );
    sameAsRecorded(t, await withGateways(store, responses), 'before the upgrade');
    const users = await store.upgradeTable('legacy', 'users');
    for (const table of TABLES.slice(1)) {
      const done = await store.upgradeTable('legacy', table);
      t.ok(done.converted > 0 && done.converted >= done.rows - 1, `${table}: ${done.converted} of ${done.rows} rows converted`);
    }
    t.equal(users.converted, users.rows, `users: ${users.converted} of ${users.rows} rows converted`);
    t.same(store.legacyTables(), [], 'no table left to upgrade');
    t.same(await store.upgradeTable('legacy', 'users'), { rows: users.rows, converted: 0 }, 'upgrading again changes nothing');
    sameAsRecorded(t, await withGateways(store, responses), 'after the upgrade');
    await store.close();
    for (const table of TABLES) {
      const forms = await rowForms(dir, `data/legacy/${table}`);
      t.same(forms.problems, [], `${table}: ${forms.rows} rows, each in one form`);
      t.equal(forms.legacy, 0, `${table}: no legacy row left`);
      t.equal(forms.earlierFormat, 0, `${table}: no compact row of an earlier format left`);
      if (table === 'wide') t.equal(forms.spilled, 1, 'wide: the 3,000-qualifier row is spilled, the small rows compact');
      else t.equal(forms.spilled, 0, `${table}: every row compact`);
    }
  });

  /** Writes that touch legacy rows of every kind (versions, counters, deletes, the wide row, TTL rows). */
  async function someWrites(base: string): Promise<void> {
    const url = (table: string, query = ''): string => `${base}/v1/instances/legacy/tables/${table}/rows${query}`;
    const post = async (table: string, body: unknown): Promise<void> => {
      const res = await fetch(url(table), { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
      if (res.status !== 200) throw new Error(`POST ${table}: ${res.status} ${await res.text()}`);
    };
    await post(
      'users',
      [1, 2, 3, 4, 7].map((uid) => ({ entityId: [uid], cells: { info: { email: [{ timestamp: 1_900_000_000_000, value: `new${uid}@example.org` }] } } })),
    );
    await post('users', { entityId: [14], cells: { logins: { future: [{ value: { incr: 2 } }] } } });
    await post('wide', { entityId: 'rowkey=wide', cells: { m: { 'qualifier-00007': [{ timestamp: 1_900_000_000_000, value: 'rewritten' }] } } });
    await post('ttl', { entityId: 'rowkey=t5', cells: { capped: { v: [{ timestamp: 1_900_000_000_000, value: 1 }] } } });
    const del = await fetch(url('users', `?eid=${encodeURIComponent('[10]')}&cols=info:age`), { method: 'DELETE' });
    if (del.status !== 200) throw new Error(`DELETE: ${del.status}`);
  }

  t.test(`${fixture.name}: writes to rows of ${fixture.what} answer as the same writes after an upgrade`, async (t) => {
    const legacyDir = legacyCopy(t);
    const upgradedDir = legacyCopy(t);
    const legacy = new LmdbStore({ path: legacyDir, noSync: true, scanThreads: 0 });
    const upgraded = new LmdbStore({ path: upgradedDir, noSync: true, scanThreads: 0 });
    for (const table of TABLES) await upgraded.upgradeTable('legacy', table);
    const results = [];
    for (const store of [legacy, upgraded]) {
      results.push(
        await withGateways(store, async (base) => {
          await someWrites(base(3));
          return responses(base);
        }),
      );
    }
    const [a, b] = results as [Map<string, string>, Map<string, string>];
    const differing = [...a.keys()].filter((k) => a.get(k) !== b.get(k));
    t.same(differing, [], `all ${a.size} responses equal after the same writes (legacy rows written vs upgraded rows written)`);
    t.ok(
      [...a.values()].every((v) => v.startsWith('200 ')),
      'every read answered 200',
    );
    t.not(a.get('3 users/rows?eid=%5B1%5D&versions=all'), `200 ${RECORDED['3 users/rows?eid=%5B1%5D&versions=all']?.body}`, 'the writes changed what is read');
    await legacy.close();
    await upgraded.close();
    const forms = await rowForms(legacyDir, 'data/legacy/users', true);
    t.same(forms.problems, []);
    t.ok(
      fixture.compactAfterWrites(forms),
      `the written rows are compact now (legacy: five emails, one counter; a delete leaves a legacy row as it is): ${JSON.stringify(forms)}`,
    );
  });

  t.test(`${fixture.name}: rowgate serve upgrades the directory at start-up, says so, then serves the same bytes`, async (t) => {
    await ensureBuilt();
    const dir = legacyCopy(t);
    const served = await serveCli(t, ['--data', dir, '--port', '0']);
    const upgradedTables = (): string[] =>
      served
        .stderr()
        .split('\n')
        .filter((l) => l.includes('"table upgraded"'))
        .map((l) => (JSON.parse(l) as { table: string }).table);
    // Log lines reach the pipe asynchronously: wait for them a little (at most 5 s).
    for (let waited = 0; upgradedTables().length < TABLES.length && waited < 5000; waited += 50) await sleep(50);
    const upgraded = upgradedTables();
    t.same(upgraded.sort(), [...TABLES].sort(), 'one log line per upgraded table');
    // serve runs one revision (3): its responses are compared.
    const got = await responses(() => `http://127.0.0.1:${served.port}`, [3]);
    const mismatched = [...got.entries()].filter(
      ([k, v]) => createHash('sha256').update(v.slice(4)).digest('hex') !== RECORDED[k]!.sha256 || !v.startsWith('200 '),
    );
    t.same(
      mismatched.map(([k]) => k),
      [],
      'revision 3 responses byte-identical to the earlier release',
    );
    await served.stop();
  });
}
