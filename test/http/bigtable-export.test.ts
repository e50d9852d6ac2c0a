/**
 * Exports on the Bigtable store, over a cbtemulator this file starts (skipped, saying what is
 * missing, without it): GET .../splits (SampleRowKeys) ranges cover the table with no gap or
 * overlap, for random RAW keys and salted FORMATTED keys; paging by the scan trailers visits
 * every row once; `export --url --parallel 4` is the full scan byte for byte, and resumes after a
 * cut to the same bytes.
 */
import { randomBytes } from 'node:crypto';
import t from 'tap';
import { parseLayout } from '../../lib/model/layout/layout.js';
import { encodeRowKey } from '../../lib/model/keys/row-key.js';
import type { RowWrite } from '../../lib/model/types.js';
import { BigtableStore } from '../../lib/store/bigtable/bigtable-store.js';
import { EMULATOR_MISSING, startEmulator } from '../store/bigtable-emulator.js';
import { RAW_TABLE_LAYOUT, SAMPLE_LAYOUT, startGateway } from './harness.js';
import { checkSplitsCover } from './suites/splits-check.js';
import { pageThrough } from './suites/trailers-check.js';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { ensureBuilt, runCli, tempDir } from '../cli/helpers.js';
import { raw } from './harness.js';

const ROWS = 3000;

const emulator = await startEmulator();
if (!emulator) {
  t.test('splits on Bigtable', { skip: EMULATOR_MISSING }, async () => undefined);
} else {
  t.teardown(() => emulator.stop());

  t.test('split ranges from SampleRowKeys cover the table exactly (random and salted keys)', async (t) => {
    const h = await startGateway({}, { store: await BigtableStore.open({ projectId: 'test', instanceId: 'splits', tablePrefix: 'splits' }) });
    t.teardown(() => h.close());
    await h.store.createTable('default', parseLayout(RAW_TABLE_LAYOUT));
    const sample = parseLayout(SAMPLE_LAYOUT);
    const random: RowWrite[] = [];
    const salted: RowWrite[] = [];
    for (let i = 0; i < ROWS; i++) {
      const key = randomBytes(1 + (i % 12));
      if (i % 5 === 0) key[0] = 0;
      random.push({
        rowKey: key,
        cells: [{ kind: 'value', family: 'info', qualifier: 'q', timestamp: 1, schemaId: 0, json: JSON.stringify('v'.repeat(100 + (i % 10) * 100)) }],
      });
      salted.push({
        rowKey: encodeRowKey(sample.keyFormat, [BigInt(i)]),
        cells: [{ kind: 'value', family: 'strings', qualifier: 'q', timestamp: 1, schemaId: 0, json: JSON.stringify('x'.repeat(200 + (i % 50))) }],
      });
    }
    await h.store.write('default', 'raw_table', random);
    await h.store.write('default', 'sample_table', salted);
    for (const table of ['raw_table', 'sample_table']) {
      const ranges = await checkSplitsCover(t, h.base, `/v1/instances/default/tables/${table}`, [1, 4, 9], table);
      t.ok(
        ranges.every((r) => r.estimated_rows === null && r.estimated_bytes >= 0),
        `${table}: bytes estimated, rows not (Bigtable samples hold bytes only)`,
      );
      t.comment(`${table}: ${ranges.length} ranges, bytes ${ranges.map((r) => r.estimated_bytes).join(' ')}`);
      const path = `/v1/instances/default/tables/${table}/rows`;
      const full = await raw(h.base, 'GET', `${path}?limit=-1`);
      t.equal(
        await pageThrough(t, h.base, path, 700, 'start_eid', full.body.split('\r\n').length - 1),
        full.body,
        `${table}: pages by the next-start trailer are the full scan`,
      );

      await ensureBuilt();
      const args = ['export', '--url', h.base, '--instance', 'default', '--table', table, '--parallel', '4'];
      const exported = await runCli(args);
      t.equal(exported.code, 0, exported.stderr);
      t.ok(exported.stdout === full.body, `${table}: export --url --parallel 4 is the full scan, byte for byte`);
      const out = join(tempDir(t), 'resumed.json');
      writeFileSync(`${out}.partial`, full.body.slice(0, Math.floor(full.body.length * 0.37)));
      const resumed = await runCli([...args, '--out', out, '--resume']);
      t.equal(resumed.code, 0, resumed.stderr);
      t.ok(readFileSync(out, 'utf8') === full.body, `${table}: resumed after a cut mid-row, the full scan`);
    }
  });
}
