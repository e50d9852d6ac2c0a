/**
 * Parquet written by parquet-wasm from the scan threads' Arrow batches (lib/rows/stages/parquet-arrow.ts),
 * read by pyarrow and DuckDB, for test/support/typed-table.ts's table (strings, longs, ints,
 * doubles, floats, booleans, bytes, a record, a counter, a map family; the engine tables of
 * parquet.test.ts add unions and the other key formats): a local export (default codec; gzip with row groups of 7 rows; --versions all) and
 * GET rows as Parquet (newest, versions=all), each with the JSON scan's rows, column names, the
 * column types docs/interface.md promises and every value. Skips without the engines (engines.ts).
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import t from 'tap';
import { parseLayout } from '../../lib/model/layout/layout.js';
import { ensureBuilt, runCli, serveCli, tempDir } from '../cli/helpers.js';
import { getBytes, raw } from '../http/harness.js';
import { TYPED_LAYOUT, typedRows, typedStore } from '../support/typed-table.js';
import { engineTest, readBack } from './engines.js';
import { checkAgainstJson } from './expected.js';

const ROWS_PATH = '/v1/instances/default/tables/typed/rows';
const TABLE = ['--instance', 'default', '--table', 'typed', '--format', 'parquet'];
const N = 120;

t.before(ensureBuilt);

engineTest(t, 'pyarrow and DuckDB read the Parquet parquet-wasm writes from Arrow batches (exports and scans) with the JSON scan values', async (t) => {
  const dir = tempDir(t, 'rowgate-engines-');
  const data = join(dir, 'data');
  await typedStore(data, typedRows(N));
  const files: { how: string; file: string; versions: boolean }[] = [];
  const exports: { how: string; flags: string[]; versions: boolean }[] = [
    { how: 'export', flags: [], versions: false },
    { how: 'export --codec gzip --row-group-rows 7', flags: ['--codec', 'gzip', '--row-group-rows', '7'], versions: false },
    { how: 'export --versions all', flags: ['--versions', 'all'], versions: true },
  ];
  for (const [i, e] of exports.entries()) {
    const file = join(dir, `export-${i}.parquet`);
    const r = await runCli(['export', '--data', data, ...TABLE, ...e.flags, '--out', file]);
    t.equal(r.code, 0, `${e.how}: ${r.stderr}`);
    files.push({ how: e.how, file, versions: e.versions });
  }
  const served = await serveCli(t, ['--data', data, '--port', '0', '--host', '127.0.0.1']);
  t.teardown(() => served.stop());
  const base = `http://127.0.0.1:${served.port}`;
  const scans = new Map<boolean, string>();
  for (const versions of [false, true]) {
    const query = `${ROWS_PATH}?limit=-1${versions ? '&versions=all' : ''}`;
    const json = await raw(base, 'GET', query);
    t.equal(json.status, 200);
    scans.set(versions, json.body);
    const scan = await getBytes(base, query, { accept: 'application/vnd.apache.parquet' });
    t.equal(scan.status, 200, `${query}: GET rows answers Parquet`);
    const file = join(dir, `served${versions ? '-all' : ''}.parquet`);
    writeFileSync(file, scan.body);
    files.push({ how: `GET rows${versions ? ' versions=all' : ''}`, file, versions });
  }
  const reads = readBack(
    'parquet',
    files.map((f) => f.file),
  );
  t.equal(reads.length, files.length * 2, 'each file read by both engines');
  const layout = parseLayout(TYPED_LAYOUT);
  for (const { how, file, versions } of files)
    for (const read of reads.filter((x) => x.file === file))
      checkAgainstJson(t, `typed ${how}, ${read.engine}`, layout, read, scans.get(versions)!, N, versions);
});
