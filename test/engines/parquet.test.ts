/**
 * Parquet read by the engines users have (issue #30 item 5): `rowgate export --format parquet` (from
 * the store's folder, and with --url --parallel) and GET rows with `Accept:
 * application/vnd.apache.parquet`, each read by pyarrow (parquet.read_table) and DuckDB (SELECT *
 * FROM 'file.parquet'), give every table of engine-tables.ts (the four row key formats, every cell
 * type) with the JSON scan's row count, row keys, entity id components, values (the newest version;
 * a scan with versions=all: {timestamp, value} lists newest first) and nulls for absent cells, in
 * the column types docs/interface.md promises for the same columns over Arrow; the exports use
 * every --codec and row groups of 7 and 16 rows besides the default. The five exports
 * run at once (each is a node process start, ~0.5 s) and one Python process reads the 13 files.
 * The scans are served by `rowgate serve` as a process over the filled store, as a user runs it.
 *
 * Skips when the engines are missing (fails then in CI: engines.ts), and when the CLI refuses
 * `--format parquet` as an unknown format (the Parquet export not built), saying so.
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import t from 'tap';
import { parseLayout } from '../../lib/model/layout/layout.js';
import { ensureBuilt, runCli, serveCli, tempDir } from '../cli/helpers.js';
import { getBytes, raw } from '../http/harness.js';
import { engineGateway, layoutOf, ROWS, rowsPath, TABLES, type EngineTable } from './engine-tables.js';
import { engineTest, readBack } from './engines.js';
import { checkAgainstJson } from './expected.js';

const PARQUET = { accept: 'application/vnd.apache.parquet' };

t.before(ensureBuilt);

/** commander's refusal of a value outside --format's choices, printed before any flag is acted on. */
const UNKNOWN_FORMAT = /argument 'parquet' is invalid/;

engineTest(t, 'pyarrow and DuckDB read each key format table from Parquet exports (local, --url --parallel) and scans with the JSON scan values', async (t) => {
  const dir = tempDir(t, 'rowgate-engines-');
  const data = join(dir, 'data');
  await (await engineGateway(data)).close();
  const served = await serveCli(t, ['--data', data, '--port', '0', '--host', '127.0.0.1']);
  t.teardown(() => served.stop());
  const base = `http://127.0.0.1:${served.port}`;
  const table = (name: string) => ['--instance', 'default', '--table', name, '--format', 'parquet'];
  const formatted = TABLES.find((x) => x.encoding === 'FORMATTED')!;
  const exports: { table: EngineTable; how: string; file: string; args: string[] }[] = [
    // Each codec, and row groups of a few rows (several groups a file), as the engines must read them.
    ...TABLES.map((x, i) => {
      const file = join(dir, `${x.name}.parquet`);
      const flags = [[], ['--codec', 'gzip', '--row-group-rows', '7'], ['--codec', 'brotli'], ['--codec', 'uncompressed', '--row-group-rows', '16']][i]!;
      return { table: x, how: ['export', ...flags].join(' '), file, args: ['export', '--data', data, ...table(x.name), ...flags, '--out', file] };
    }),
    // --url with --parallel: split ranges read at once and written in key order.
    {
      table: formatted,
      how: 'export --url --parallel 3 --row-group-rows 7 --codec zstd',
      file: join(dir, 'remote.parquet'),
      args: [
        'export',
        '--url',
        base,
        '--parallel',
        '3',
        '--row-group-rows',
        '7',
        '--codec',
        'zstd',
        ...table(formatted.name),
        '--out',
        join(dir, 'remote.parquet'),
      ],
    },
  ];
  const results = await Promise.all(exports.map((e) => runCli(e.args)));
  const refused = results.find((r) => UNKNOWN_FORMAT.test(r.stderr));
  if (refused !== undefined) {
    t.plan(
      0,
      `rowgate export refuses --format parquet as an unknown format (${refused.stderr.trim().split('\n')[0]}): the Parquet export (issue #30 item 1) is not built`,
    );
    return;
  }
  results.forEach((r, i) => t.equal(r.code, 0, `${exports[i]!.how} ${exports[i]!.table.name} --format parquet ${r.stderr}`));

  const scans = new Map<string, string>();
  const files: { table: EngineTable; how: string; file: string; versions?: boolean }[] = [...exports];
  for (const x of TABLES)
    for (const versions of [false, true]) {
      const query = `${rowsPath(x.name)}?limit=-1${versions ? '&versions=all' : ''}`;
      const json = await raw(base, 'GET', query);
      t.equal(json.status, 200);
      scans.set(query, json.body);
      const scan = await getBytes(base, query, PARQUET);
      t.equal(scan.status, 200, `${query}: GET rows answers Parquet`);
      t.equal(scan.type, 'application/vnd.apache.parquet');
      const served = join(dir, `${x.name}.served${versions ? '.all' : ''}.parquet`);
      writeFileSync(served, scan.body);
      files.push({ table: x, how: `GET rows${versions ? ' versions=all' : ''}`, file: served, versions });
    }

  const reads = readBack(
    'parquet',
    files.map((f) => f.file),
  );
  t.equal(reads.length, files.length * 2, 'each file read by both engines');
  for (const { table, how, file, versions = false } of files) {
    const layout = parseLayout(layoutOf(table));
    for (const read of reads.filter((x) => x.file === file)) {
      const what = `${table.name} (${table.encoding} keys) ${how}, ${read.engine}`;
      checkAgainstJson(t, what, layout, read, scans.get(`${rowsPath(table.name)}?limit=-1${versions ? '&versions=all' : ''}`)!, ROWS, versions);
    }
  }
});
