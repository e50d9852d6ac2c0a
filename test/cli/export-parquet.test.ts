/**
 * `rowgate export --format parquet`: hyparquet (the reader) reads the file back with the JSON
 * export's rows and values (entity ids, every typed column, nulls for absent cells, the map family),
 * locally and from a gateway with --url --parallel; --versions gives lists; --out x.parquet implies
 * the format; --row-group-rows makes several row groups; --codec picks the pages' codec; --resume,
 * a wrong codec and --row-group-rows with another format are usage errors (exit 2). The local
 * export writes from the scan threads' Arrow batches (lib/rows/stages/parquet-arrow.ts), --url from
 * the gateway's rows (lib/rows/stages/parquet.ts): --versions, --codec and a file of no rows on both.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import t, { type Test } from 'tap';
import { parquetMetadata, parquetReadObjects } from 'hyparquet';
import { parseExactJson } from '../../lib/model/json/exact-json.js';
import { expectedValue, servedTypedTable, typedRows, typedStore, type Doc } from '../support/typed-table.js';
import { ensureBuilt, runCli, tempDir } from './helpers.js';

t.before(ensureBuilt);

const TABLE = ['--instance', 'default', '--table', 'typed'];
const COLUMNS = ['f:s', 'f:l', 'f:i', 'f:d', 'f:fl', 'f:b', 'f:by', 'f:rec', 'f:n', 'longs'];
const N = 250;

function fileOf(path: string): ArrayBuffer {
  const b = readFileSync(path);
  return b.buffer.slice(b.byteOffset, b.byteOffset + b.length) as ArrayBuffer;
}

async function exported(t: Test, args: string[], out: string): Promise<Record<string, unknown>[]> {
  const r = await runCli(['export', ...args, ...TABLE, '--out', out]);
  t.equal(r.code, 0, r.stderr);
  return (await parquetReadObjects({ file: fileOf(out), utf8: false })) as Record<string, unknown>[];
}

function compare(t: Test, rows: Record<string, unknown>[], json: Doc[], versions: number, what: string): void {
  t.equal(rows.length, json.length, `${what}: one Parquet row a JSON row`);
  let compared = 0;
  json.forEach((doc, r) => {
    const row = rows[r]!;
    if (row['name'] !== doc.entityId[0] || row['n'] !== BigInt(String(doc.entityId[1]))) t.fail(`${what} row ${r}: entity id differs`);
    for (const c of COLUMNS) if (t.same(row[c], expectedValue(doc, c, versions), `${what} row ${r} ${c}`, { diagnostic: false })) compared++;
  });
  t.equal(compared, json.length * COLUMNS.length, `${what}: every value equals the JSON export's`);
}

t.test('a Parquet export reads back with the JSON export values, locally and with --url --parallel', async (t) => {
  const dir = tempDir(t);
  const base = await servedTypedTable(t, typedRows(N));
  const jsonOut = join(dir, 'rows.json');
  const j = await runCli(['export', '--url', base, ...TABLE, '--out', jsonOut]);
  t.equal(j.code, 0, j.stderr);
  const json = readFileSync(jsonOut, 'utf8')
    .split('\r\n')
    .filter((l) => l !== '')
    .map((l) => parseExactJson(l, 'row') as unknown as Doc);
  t.equal(json.length, N);
  // --out x.parquet implies the format; the newest version unless --versions is given.
  compare(t, await exported(t, ['--url', base], join(dir, 'remote.parquet')), json, 1, '--url');
  compare(t, await exported(t, ['--url', base, '--parallel', '3'], join(dir, 'parallel.parquet')), json, 1, '--url --parallel 3');
  const grouped = join(dir, 'grouped.parquet');
  compare(t, await exported(t, ['--url', base, '--row-group-rows', '100'], grouped), json, 1, '--row-group-rows 100');
  t.equal(parquetMetadata(fileOf(grouped)).row_groups.length, 3, '250 rows in row groups of 100: three');
  t.equal(parquetMetadata(fileOf(join(dir, 'remote.parquet'))).row_groups.length, 1, 'one group under the default size');
  compare(t, await exported(t, ['--url', base, '--versions', '2'], join(dir, 'v2.parquet')), json, 2, '--versions 2');
  const gz = join(dir, 'gz.parquet');
  // hyparquet reads snappy only without hyparquet-compressors: the gzip file's footer names its codec.
  t.equal((await runCli(['export', '--url', base, ...TABLE, '--codec', 'gzip', '--out', gz])).code, 0);
  t.equal(parquetMetadata(fileOf(gz)).row_groups[0]?.columns[0]?.meta_data?.codec, 'GZIP');
  const zstd = join(dir, 'zstd.parquet');
  t.equal((await runCli(['export', '--url', base, ...TABLE, '--codec', 'zstd', '--out', zstd])).code, 0);
  t.equal(parquetMetadata(fileOf(zstd)).row_groups[0]?.columns[0]?.meta_data?.codec, 'ZSTD', 'zstd (pyarrow and DuckDB read it: test/engines/parquet.test.ts)');
  t.equal(parquetMetadata(fileOf(join(dir, 'remote.parquet'))).row_groups[0]?.columns[0]?.meta_data?.codec, 'SNAPPY', 'snappy by default');
});

t.test('a local Parquet export reads back with the JSON export values', async (t) => {
  const dir = tempDir(t);
  const data = join(dir, 'data');
  await typedStore(data, typedRows(N));
  const jsonOut = join(dir, 'rows.json');
  t.equal((await runCli(['export', '--data', data, ...TABLE, '--out', jsonOut, '--versions', '1'])).code, 0);
  const json = readFileSync(jsonOut, 'utf8')
    .split('\r\n')
    .filter((l) => l !== '')
    .map((l) => parseExactJson(l, 'row') as unknown as Doc);
  compare(t, await exported(t, ['--data', data, '--format', 'parquet', '--row-group-rows', '64'], join(dir, 'local.parquet')), json, 1, 'local');
  t.equal(parquetMetadata(fileOf(join(dir, 'local.parquet'))).row_groups.length, 4, '250 rows in groups of 64: four');
  // Locally the file is written from the scan threads' Arrow batches (parquet-arrow.ts), --url from rows (stages/parquet.ts): both flags reach it.
  const jsonV2Out = join(dir, 'rows-v2.json');
  t.equal((await runCli(['export', '--data', data, ...TABLE, '--out', jsonV2Out, '--versions', '2'])).code, 0);
  const jsonV2 = readFileSync(jsonV2Out, 'utf8')
    .split('\r\n')
    .filter((l) => l !== '')
    .map((l) => parseExactJson(l, 'row') as unknown as Doc);
  compare(t, await exported(t, ['--data', data, '--format', 'parquet', '--versions', '2'], join(dir, 'local-v2.parquet')), jsonV2, 2, 'local --versions 2');
  const localGz = join(dir, 'local-gz.parquet');
  t.equal((await runCli(['export', '--data', data, ...TABLE, '--codec', 'gzip', '--out', localGz])).code, 0);
  t.equal(parquetMetadata(fileOf(localGz)).row_groups[0]?.columns[0]?.meta_data?.codec, 'GZIP', 'local --codec gzip');
  const none = await exported(t, ['--data', data, '--format', 'parquet', '--limit', '0'], join(dir, 'none.parquet'));
  t.equal(none.length, 0, '--limit 0: a file of no rows');
  t.same(
    parquetMetadata(fileOf(join(dir, 'none.parquet'))).schema.map((e) => e.name),
    parquetMetadata(fileOf(join(dir, 'local.parquet'))).schema.map((e) => e.name),
    'a file of no rows has the columns all the same',
  );

  const usage = async (args: string[], message: RegExp): Promise<void> => {
    const r = await runCli(['export', '--data', data, ...TABLE, ...args]);
    t.equal(r.code, 2, `${args.join(' ')}: exit 2`);
    t.match(r.stderr, message);
  };
  await usage(
    ['--format', 'parquet', '--out', join(dir, 'r.parquet'), '--resume'],
    /--resume continues json and ndjson exports \(a Parquet file is not cut at a row\)/,
  );
  await usage(['--format', 'parquet', '--codec', 'deflate'], /--codec deflate is not a Parquet codec: give one of snappy, gzip, brotli, zstd, uncompressed/);
  await usage(['--format', 'avro', '--codec', 'snappy'], /--codec snappy is not an Avro codec/);
  await usage(['--row-group-rows', '10'], /--row-group-rows sizes a Parquet file's row groups/);
  await usage(['--format', 'json', '--out', join(dir, 'x.parquet')], /names an parquet file, but --format is json/);
});
