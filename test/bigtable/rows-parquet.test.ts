/**
 * GET rows with Accept: application/vnd.apache.parquet on the Bigtable store (a cbtemulator this
 * file starts; skipped, saying what is missing, without it): a `rowgate serve` process over the
 * emulator answers a scan as a Parquet file hyparquet reads back with the same values as its JSON
 * scan (every typed column, entity ids, nulls for absent cells, the map family), so Parquet goes
 * through the same filtered rows on both stores.
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import t from 'tap';
import { parquetReadObjects } from 'hyparquet';
import { parseExactJson } from '../../lib/model/json/exact-json.js';
import { parseLayout } from '../../lib/model/layout/layout.js';
import { BigtableStore } from '../../lib/store/bigtable/bigtable-store.js';
import { ensureBuilt, serveCli, tempDir } from '../cli/helpers.js';
import { getBytes, raw } from '../http/harness.js';
import { EMULATOR_MISSING, startEmulator } from '../store/bigtable-emulator.js';
import { expectedValue, TYPED_LAYOUT, typedRows, type Doc } from '../support/typed-table.js';

const ROWS = '/v1/instances/default/tables/typed/rows';
const COLUMNS = ['f:s', 'f:l', 'f:i', 'f:d', 'f:fl', 'f:b', 'f:by', 'f:rec', 'f:n', 'longs'];
const N = 120;

const emulator = await startEmulator();
if (!emulator) {
  t.test('Parquet scans on the Bigtable store', { skip: EMULATOR_MISSING }, async () => undefined);
} else {
  t.teardown(() => emulator.stop());
  t.before(ensureBuilt);
  t.test('a Parquet scan on Bigtable reads back with its JSON scan values', async (t) => {
    const target = { projectId: 'test', instanceId: 'parquet', tablePrefix: 'pq' };
    const store = await BigtableStore.open(target);
    await store.createInstance('default');
    await store.createTable('default', parseLayout(TYPED_LAYOUT));
    await store.write('default', 'typed', typedRows(N));
    await store.close();
    const cfg = join(tempDir(t), 'rowgate.yaml');
    writeFileSync(cfg, `admin: false\nstore:\n  kind: bigtable\n  projectId: test\n  instanceId: parquet\n  tablePrefix: pq\n`);
    const served = await serveCli(t, ['--config', cfg, '--port', '0', '--host', '127.0.0.1'], { env: emulator.env, admin: false });
    t.teardown(() => served.stop());
    const base = `http://127.0.0.1:${served.port}`;
    const json = (await raw(base, 'GET', `${ROWS}?limit=-1`)).body
      .split('\r\n')
      .filter((l) => l !== '')
      .map((l) => parseExactJson(l, 'row') as unknown as Doc);
    t.equal(json.length, N);
    const got = await getBytes(base, `${ROWS}?limit=-1`, { accept: 'application/vnd.apache.parquet' });
    t.equal(got.status, 200);
    t.equal(got.trailers['x-rowgate-rows'], String(N));
    const file = got.body.buffer.slice(got.body.byteOffset, got.body.byteOffset + got.body.length) as ArrayBuffer;
    const rows = (await parquetReadObjects({ file, utf8: false })) as Record<string, unknown>[];
    t.equal(rows.length, N);
    let compared = 0;
    json.forEach((doc, r) => {
      if (rows[r]!['name'] !== doc.entityId[0]) t.fail(`row ${r}: entity id differs`);
      for (const c of COLUMNS) if (t.same(rows[r]![c], expectedValue(doc, c, 1), `row ${r} ${c}`, { diagnostic: false })) compared++;
    });
    t.equal(compared, N * COLUMNS.length, 'every value equals the JSON scan');
  });
}
