/**
 * GET .../splits on the embedded store: ranges that cover the table with no gap or overlap (random
 * RAW keys with 00 bytes, salted FORMATTED keys, HASH_PREFIX keys, keys behind a long shared
 * prefix), balanced by size, in every revision's bound form; bad n is a 400; read scope suffices.
 */
import { randomBytes } from 'node:crypto';
import t from 'tap';
import { sha256Hex } from '../../lib/http/auth.js';
import { parseLayout } from '../../lib/model/layout/layout.js';
import { encodeRowKey } from '../../lib/model/keys/row-key.js';
import type { RowWrite } from '../../lib/model/types.js';
import { RAW_TABLE_LAYOUT, raw, startGateway, startGatewayOver } from './harness.js';
import { checkSplitsCover, rangePath, splitsOf } from './suites/splits-check.js';

const HASH_PREFIX_LAYOUT = { ...RAW_TABLE_LAYOUT, name: 'hp_table', keys_format: { encoding: 'HASH_PREFIX', hash_type: 'MD5', hash_size: 2 } };
const ROWS = 2000;

function rowOf(rowKey: Buffer, i: number): RowWrite {
  // Sizes vary tenfold, so balancing by size differs from balancing by row count.
  return {
    rowKey,
    cells: [{ kind: 'value', family: 'info', qualifier: 'q', timestamp: 1, schemaId: 0, json: JSON.stringify('v'.repeat(10 + (i % 10) * 30)) }],
  };
}

t.test('ranges cover the table exactly and are balanced, for random, salted, hash-prefixed and crowded keys', async (t) => {
  const h = await startGateway();
  t.teardown(() => h.close());
  await h.store.createTable('default', parseLayout(RAW_TABLE_LAYOUT));
  await h.store.createTable('default', parseLayout(HASH_PREFIX_LAYOUT));
  await h.store.createTable('default', parseLayout({ ...RAW_TABLE_LAYOUT, name: 'crowded' }));
  const sample = parseLayout((await import('./harness.js')).SAMPLE_LAYOUT);
  const hp = parseLayout(HASH_PREFIX_LAYOUT);
  const random: RowWrite[] = [];
  const salted: RowWrite[] = [];
  const hashed: RowWrite[] = [];
  const crowded: RowWrite[] = [];
  for (let i = 0; i < ROWS; i++) {
    const key = randomBytes(1 + (i % 12));
    if (i % 5 === 0) key[0] = 0; // 00 bytes are escaped in stored keys
    random.push(rowOf(key, i));
    salted.push({
      rowKey: encodeRowKey(sample.keyFormat, [BigInt(i)]),
      cells: [{ kind: 'value', family: 'strings', qualifier: 'q', timestamp: 1, schemaId: 0, json: JSON.stringify('x'.repeat(i % 50)) }],
    });
    hashed.push(rowOf(encodeRowKey(hp.keyFormat, [`user-${i}`]), i));
    crowded.push(rowOf(Buffer.from(`${'shared/prefix/'.repeat(6)}${String(i).padStart(6, '0')}`), i));
  }
  await h.store.write('default', 'raw_table', random);
  await h.store.write('default', 'sample_table', salted);
  await h.store.write('default', 'hp_table', hashed);
  await h.store.write('default', 'crowded', crowded);

  for (const table of ['raw_table', 'sample_table', 'hp_table', 'crowded']) {
    const path = `/v1/instances/default/tables/${table}`;
    const ranges = await checkSplitsCover(t, h.base, path, [1, 3, 4, 16], table);
    t.equal(ranges.length, 16, `${table}: 16 ranges of ${ROWS} rows`);
    const estimated = ranges.reduce((sum, r) => sum + r.estimated_rows!, 0);
    t.ok(Math.abs(estimated - ROWS) <= ROWS * 0.1, `${table}: estimated rows ${estimated} within 10% of ${ROWS}`);
    // Balanced by stored size: each range's bytes within a factor of the mean.
    const sizes: number[] = [];
    for (const range of ranges) {
      const body = (await raw(h.base, 'GET', rangePath(path, range))).body;
      sizes.push(Buffer.byteLength(body));
    }
    const mean = sizes.reduce((a, b) => a + b, 0) / sizes.length;
    t.ok(Math.max(...sizes) <= mean * 2 && Math.min(...sizes) >= mean / 3, `${table}: range sizes balanced (${sizes.join(' ')})`);
  }
});

t.test('an empty table is one open range; bad n is a 400; unknown tables 404', async (t) => {
  const h = await startGateway();
  t.teardown(() => h.close());
  const path = '/v1/instances/default/tables/players';
  t.same(await splitsOf(h.base, path, 8), [{ start: null, end: null, estimated_rows: 0, estimated_bytes: 0 }]);
  for (const bad of ['0', '-1', 'x', '1025', '', '1.5']) {
    const res = await raw(h.base, 'GET', `${path}/splits?n=${bad}`);
    t.equal(res.status, 400, `n=${bad}`);
    t.equal(JSON.parse(res.body).code, 'RG_ERR_BAD_PARAMETER');
  }
  t.equal((await raw(h.base, 'GET', `${path}/splits?limit=3`)).status, 400, 'unknown parameter');
  t.equal((await raw(h.base, 'GET', '/v1/instances/default/tables/nope/splits')).status, 404);
  t.equal((await raw(h.base, 'GET', '/v1/instances/nope/tables/players/splits')).status, 404);
});

t.test('revisions 1 and 2 give bounds as start_rk/end_rk take them (hex)', async (t) => {
  const h = await startGateway();
  t.teardown(() => h.close());
  const sample = parseLayout((await import('./harness.js')).SAMPLE_LAYOUT);
  const rows: RowWrite[] = [];
  for (let i = 0; i < 300; i++)
    rows.push({
      rowKey: encodeRowKey(sample.keyFormat, [BigInt(i)]),
      cells: [{ kind: 'value', family: 'strings', qualifier: 'q', timestamp: 1, schemaId: 0, json: '"v"' }],
    });
  await h.store.write('default', 'sample_table', rows);
  for (const revision of [1, 2] as const) {
    const g = await startGatewayOver(h.store, { revision });
    t.teardown(() => g.close());
    const path = '/v1/instances/default/tables/sample_table';
    const res = await raw(g.base, 'GET', `${path}/splits?n=3`);
    t.equal(res.status, 200);
    const body = JSON.parse(res.body) as { start_param: string; end_param: string; splits: { start: string | null; end: string | null }[] };
    t.equal(body.start_param, 'start_rk');
    t.equal(body.splits.length, 3);
    let joined = '';
    for (const s of body.splits) {
      t.ok(s.start === null || /^([0-9a-f]{2})+$/.test(s.start), `revision ${revision}: hex bound ${s.start}`);
      const q = ['limit=-1', ...(s.start === null ? [] : [`start_rk=${s.start}`]), ...(s.end === null ? [] : [`end_rk=${s.end}`])];
      joined += (await raw(g.base, 'GET', `${path}/rows?${q.join('&')}`)).body;
    }
    t.equal(joined, (await raw(g.base, 'GET', `${path}/rows?limit=-1`)).body, `revision ${revision}: the ranges joined are the full scan`);
  }
});

t.test('splits need the read scope, as reading rows does', async (t) => {
  const h = await startGateway({
    auth: {
      tokens: [
        { name: 'reader', sha256: sha256Hex('r-token'), scopes: { default: 'read' } },
        { name: 'writer', sha256: sha256Hex('w-token'), scopes: { default: 'write' } },
      ],
    },
  });
  t.teardown(() => h.close());
  const path = '/v1/instances/default/tables/players/splits?n=2';
  t.equal((await raw(h.base, 'GET', path)).status, 401);
  t.equal((await raw(h.base, 'GET', path, undefined, { authorization: 'Bearer w-token' })).status, 403);
  t.equal((await raw(h.base, 'GET', path, undefined, { authorization: 'Bearer r-token' })).status, 200);
});
