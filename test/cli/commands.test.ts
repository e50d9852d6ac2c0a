/**
 * create-table, ls, get, scan and export options, --config for every command, usage errors.
 */
import { existsSync, mkdirSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import t from 'tap';
import { demoRow } from '../../lib/demo/demo-data.js';
import { sha256Hex } from '../../lib/http/auth.js';
import { USERS_LAYOUT_JSON } from '../../lib/model/layout/demo-layouts.js';
import { startGateway } from '../http/harness.js';
import { ensureBuilt, runCli, serveCli, tempDir, writeFile } from './helpers.js';

t.before(ensureBuilt);

const RAW_LAYOUT = `{
  name: 'notes', keys_format: {encoding: 'RAW'}, version: 'layout-1.0',
  locality_groups: [{name: 'default', in_memory: false, max_versions: 1, ttl_seconds: 2147483647, compression_type: 'NONE',
    families: [{name: 'n', columns: [{name: 'text', column_schema: {type: 'INLINE', storage: 'UID', value: '"string"'}}]}]}]
}`;

t.test('create-table, ls, get and scan on one data directory', async (t) => {
  const dir = tempDir(t);
  const data = ['--data', join(dir, 'data')];
  const users = writeFile(dir, 'users.json', USERS_LAYOUT_JSON);
  const notes = writeFile(dir, 'notes.json', RAW_LAYOUT);

  const first = await runCli(['create-table', ...data, '--instance', 'shop', '--layout', users]);
  t.equal(first.code, 0, first.stderr);
  t.equal(first.stdout, 'created instance shop\ncreated table users in instance shop (key format FORMATTED; families info, logins)\n');
  const second = await runCli(['create-table', ...data, '--instance', 'shop', '--layout', notes]);
  t.equal(second.stdout, 'created table notes in instance shop (key format RAW; families n)\n', 'an existing instance is reused');
  const again = await runCli(['create-table', ...data, '--instance', 'shop', '--layout', notes]);
  t.equal(again.code, 1);
  t.equal(again.stderr, 'rowgate create-table: table notes already exists in instance shop\n');
  const badLayout = await runCli(['create-table', ...data, '--instance', 'shop', '--layout', writeFile(dir, 'bad.json', '{name: "x"}')]);
  t.equal(badLayout.code, 1);
  t.match(badLayout.stderr, /^rowgate create-table: .*layout|keys_format|locality_groups/);
  const noFile = await runCli(['create-table', ...data, '--instance', 'shop', '--layout', join(dir, 'none.json')]);
  t.equal(noFile.code, 1);
  t.match(noFile.stderr, /cannot read layout file .*none\.json/);
  await runCli(['create-table', ...data, '--instance', 'other', '--layout', notes]);

  t.equal((await runCli(['ls', ...data])).stdout, 'other\nshop\n');
  t.equal((await runCli(['ls', ...data, '--instance', 'shop'])).stdout, 'notes\nusers\n');
  const unknown = await runCli(['ls', ...data, '--instance', 'nope']);
  t.equal(unknown.code, 1);
  t.equal(unknown.stderr, 'rowgate ls: instance nope not found\n');

  const rows = Array.from({ length: 25 }, (_, i) => JSON.stringify(demoRow(100 + i))).join('\n');
  t.equal((await runCli(['import', ...data, '--instance', 'shop', '--table', 'users', '-'], { input: rows })).code, 0);
  const note = '{"entityId":"rowkey=hello\\\\x00world","cells":{"n":{"text":[{"value":"line 1\\r\\nline 2","timestamp":5}]}}}\n';
  const noteImport = await runCli(['import', ...data, '--instance', 'shop', '--table', 'notes', '-'], { input: note });
  t.equal(noteImport.code, 0, noteImport.stderr);

  const got = await runCli(['get', ...data, '--instance', 'shop', '--table', 'users', '--eid', '[101]', '--cols', 'info:name']);
  t.equal(got.code, 0, got.stderr);
  const expectedName = (demoRow(101) as { cells: { info: { name: { timestamp: number; value: string }[] } } }).cells.info.name[0]!;
  t.equal(
    got.stdout,
    `{"entityId":[101],"cells":{"info":{"name":[{"timestamp":${expectedName.timestamp},"value":${JSON.stringify(expectedName.value)},"writer_schema":0}]}}}\n`,
  );
  const missing = await runCli(['get', ...data, '--instance', 'shop', '--table', 'users', '--eid', '[7]']);
  t.equal(missing.stdout, '{"entityId":[7],"cells":{}}\n', 'a missing row has no cells');
  const raw = await runCli(['get', ...data, '--instance', 'shop', '--table', 'notes', '--eid', 'rowkey_hex=68656c6c6f00776f726c64']);
  t.equal(
    raw.stdout,
    '{"entityId":"rowkey=hello\\\\x00world","cells":{"n":{"text":[{"timestamp":5,"value":"line 1\\r\\nline 2","writer_schema":0}]}}}\n',
    'CR LF stays escaped',
  );
  const badEid = await runCli(['get', ...data, '--instance', 'shop', '--table', 'users', '--eid', '101']);
  t.equal(badEid.code, 2, 'a bad option value is bad usage');
  t.match(badEid.stderr, /^rowgate get: Provide components wrapped as a JSON array/);
  // Over-long keys: refused naming the option (lmdb-js printed "Key of size 3006 was too large" and a stack trace).
  const longKey = `rowkey=${'y'.repeat(3000)}`;
  for (const [command, option] of [
    ['get', '--eid'],
    ['scan', '--start-eid'],
    ['scan', '--end-eid'],
    ['export', '--start-eid'],
  ] as const) {
    const tooLong = await runCli([command, ...data, '--instance', 'shop', '--table', 'notes', option, longKey]);
    t.equal(tooLong.code, 2, `${command} ${option} of 3000 bytes is bad usage`);
    t.equal(tooLong.stderr, `rowgate ${command}: ${option} is a row key of 3000 bytes; the store accepts at most 1024\n`);
    t.equal(tooLong.stdout, '');
  }
  const badCols = await runCli(['get', ...data, '--instance', 'shop', '--table', 'users', '--eid', '[101]', '--cols', 'nope']);
  t.equal(badCols.code, 2);
  t.match(badCols.stderr, /cols names an unknown family: "nope"/);

  const scan = await runCli(['scan', ...data, '--instance', 'shop', '--table', 'users']);
  t.equal(scan.code, 0, scan.stderr);
  const lines = scan.stdout.split('\n');
  t.equal(lines.pop(), '');
  t.equal(lines.length, 10, 'scan shows 10 rows by default');
  t.notOk(scan.stdout.includes('\r'), 'one row a line, LF only');
  const three = await runCli(['scan', ...data, '--instance', 'shop', '--table', 'users', '--limit', '3', '--cols', 'info:age', '--versions', 'all']);
  t.equal(three.stdout.split('\n').length, 4);
  t.same(Object.keys((JSON.parse(three.stdout.split('\n')[0]!) as { cells: { info: object } }).cells.info), ['age']);
  const badLimit = await runCli(['scan', ...data, '--instance', 'shop', '--table', 'users', '--limit', '-5']);
  t.equal(badLimit.code, 2);
  t.match(badLimit.stderr, /limit must be an integer >= -1/);
  const notNumber = await runCli(['export', ...data, '--instance', 'shop', '--table', 'users', '--limit', 'abc']);
  t.equal(notNumber.code, 2, 'export --limit abc exits 2 (bad usage), as an unknown option does');
  t.match(notNumber.stderr, /^rowgate export: .*limit/);
  t.notMatch(notNumber.stderr, /\n\s+at /, 'no stack trace');
  t.equal((await runCli(['scan', ...data, '--instance', 'shop', '--table', 'users', '--versions', '0'])).code, 2);
  const badRange = await runCli(['scan', ...data, '--instance', 'shop', '--table', 'users', '--timerange', '9..3']);
  t.equal(badRange.code, 2);
  t.match(badRange.stderr, /timerange min must be less than max/);
});

t.test('export: ranges, time ranges, versions, files', async (t) => {
  const dir = tempDir(t);
  const data = ['--data', join(dir, 'data')];
  await runCli(['create-table', ...data, '--instance', 'x', '--layout', writeFile(dir, 'u.json', USERS_LAYOUT_JSON)]);
  const rows = Array.from({ length: 300 }, (_, i) => JSON.stringify(demoRow(i)));
  t.equal((await runCli(['import', ...data, '--instance', 'x', '--table', 'users', '--batch', '7', '-'], { input: rows.join('\n') })).code, 0);
  const table = [...data, '--instance', 'x', '--table', 'users'];

  const all = await runCli(['export', ...table]);
  const docs = all.stdout.split('\r\n').slice(0, -1);
  t.equal(docs.length, 300);
  t.match(all.stderr, /^exported 300 rows, \d+ cells in /);

  // Versions: all by default, 1 on request.
  const latest = await runCli(['export', ...table, '--versions', '1']);
  t.ok(latest.stdout.length < all.stdout.length, 'fewer cells with --versions 1');
  t.notMatch(latest.stdout, /"score":\[\{[^\]]*\},\{/, 'one version per column');

  // A key range: [start, end) in row-key order.
  const eidOf = (doc: string): string => JSON.stringify((JSON.parse(doc) as { entityId: unknown }).entityId);
  const range = await runCli(['export', ...table, '--start-eid', eidOf(docs[10]!), '--end-eid', eidOf(docs[20]!)]);
  t.equal(
    range.stdout,
    docs
      .slice(10, 20)
      .map((d) => `${d}\r\n`)
      .join(''),
  );
  const limited = await runCli(['export', ...table, '--limit', '0']);
  t.equal(limited.stdout, '', 'limit 0: nothing');

  // A time range keeps only the cells inside it, and rows without any are left out.
  const ranged = await runCli(['export', ...table, '--timerange', '1700000100000..1700000200000']);
  const stamps = [...ranged.stdout.matchAll(/"timestamp":(\d+)/g)].map((m) => Number(m[1]));
  t.ok(stamps.length > 0, 'some cells in the range');
  t.same(
    stamps.filter((ts) => ts < 1700000100000 || ts >= 1700000200000),
    [],
    'no cell outside [min, max)',
  );
  t.ok(ranged.stdout.split('\r\n').length - 1 < 300, 'rows without a cell in the range are left out');

  // --out: the file appears complete, under its name only at the end.
  const out = join(dir, 'out', 'users.ndjson');
  const failed = await runCli(['export', ...table, '--out', out]);
  t.equal(failed.code, 1, 'a missing output directory fails');
  t.equal(failed.stderr, `rowgate export: cannot write --out ${out}: ENOENT: no such file or directory\n`, 'naming the path given, not the temporary file');
  const file = join(dir, 'users.ndjson');
  const ok = await runCli(['export', ...table, '--out', file]);
  t.equal(ok.code, 0, ok.stderr);
  t.same(
    readdirSync(dir).filter((n) => n.startsWith('users.ndjson')),
    ['users.ndjson'],
    'no partial file left behind',
  );

  const noTable = await runCli(['export', ...data, '--instance', 'x', '--table', 'nope']);
  t.equal(noTable.code, 1);
  t.equal(noTable.stderr, 'rowgate export: table nope not found in instance x\n');
  const noData = await runCli(['export', '--data', join(dir, 'nothing'), '--instance', 'x', '--table', 'users']);
  t.equal(noData.code, 1);
  t.notOk(existsSync(join(dir, 'nothing')), 'reading commands never create a data directory');
});

/** Two components, the salt over the first: the rows of one STRING are spread over the key space. */
const PAIRS_LAYOUT = `{
  name: 'pairs', version: 'layout-1.1.0',
  keys_format: {encoding: 'FORMATTED', salt: {hash_size: 2}, range_scan_start_index: 1, nullable_start_index: 2,
    components: [{name: 's', type: 'STRING'}, {name: 'n', type: 'LONG'}]},
  locality_groups: [{name: 'default', in_memory: false, max_versions: 5, ttl_seconds: 2147483647, compression_type: 'NONE',
    families: [{name: 'f', map_schema: {type: 'INLINE', value: '"string"'}}]}]
}`;

t.test('export and scan --eid: one row, or the rows a wildcard entity id matches (a 2-component FORMATTED table)', async (t) => {
  const dir = tempDir(t);
  const data = ['--data', join(dir, 'data')];
  t.equal((await runCli(['create-table', ...data, '--instance', 'w', '--layout', writeFile(dir, 'pairs.json', PAIRS_LAYOUT)])).code, 0);
  const input: string[] = [];
  for (const s of ['a', 'b', 'ab', '']) {
    for (const n of [1, 10, -7, 42])
      input.push(
        JSON.stringify({
          entityId: [s, n],
          cells: {
            f: {
              q: [
                { value: `${s}/${n}`, timestamp: 5 },
                { value: 'older', timestamp: 4 },
              ],
              [`n${n}`]: [{ value: 'x', timestamp: 6 }],
            },
          },
        }),
      );
  }
  const imported = await runCli(['import', ...data, '--instance', 'w', '--table', 'pairs', '-'], { input: input.join('\n') });
  t.equal(imported.code, 0, imported.stderr);
  const table = [...data, '--instance', 'w', '--table', 'pairs'];
  const all = (await runCli(['export', ...table])).stdout.split('\r\n').slice(0, -1);
  t.equal(all.length, 16);
  const idOf = (doc: string): [string, number] => (JSON.parse(doc) as { entityId: [string, number] }).entityId;
  const lines = (docs: readonly string[], end = '\r\n'): string => docs.map((d) => d + end).join('');
  t.notSame(
    all.map((d) => idOf(d)[0]),
    all.map((d) => idOf(d)[0]).sort(),
    'salted: rows of one string are not adjacent',
  );

  const leading = await runCli(['export', ...table, '--eid', '["a", []]']);
  t.equal(leading.code, 0, leading.stderr);
  t.equal(leading.stdout, lines(all.filter((d) => idOf(d)[0] === 'a')), 'fixed first component: its rows, in row-key order, as the full export has them');
  t.match(leading.stderr, /^exported 4 rows, 12 cells in /);
  const second = await runCli(['export', ...table, '--eid', '[[], 10]']);
  t.equal(second.stdout, lines(all.filter((d) => idOf(d)[1] === 10)), 'leading wildcard');
  const limited = await runCli(['export', ...table, '--eid', '[[], 10]', '--limit', '2', '--versions', '1', '--cols', 'f:q']);
  const tenRows = all
    .filter((d) => idOf(d)[1] === 10)
    .slice(0, 2)
    .map((d) => idOf(d));
  t.same(
    limited.stdout
      .split('\r\n')
      .slice(0, -1)
      .map((d) => JSON.parse(d) as unknown),
    tenRows.map((id) => ({ entityId: id, cells: { f: { q: [{ timestamp: 5, value: `${id[0]}/${id[1]}`, writer_schema: 0 }] } } })),
    '--limit, --versions and --cols apply',
  );
  const scanned = await runCli(['scan', ...table, '--eid', '["ab", []]', '--versions', 'all']);
  t.equal(scanned.code, 0, scanned.stderr);
  t.equal(
    scanned.stdout,
    lines(
      all.filter((d) => idOf(d)[0] === 'ab'),
      '\n',
    ),
    'scan: the same rows, LF ends',
  );
  const partial = await runCli(['scan', ...table, '--eid', '["ab"]']);
  t.match(
    partial.stderr,
    /^rowgate scan: entity id has 1 component but the table key needs at least 2/,
    'without [] an entity id names one row, so it must be complete (as GET rows?eid)',
  );
  t.equal((await runCli(['export', ...table, '--eid', '["zz", []]'])).stdout, '', 'no matching row');

  // One row: the line the full export has; a missing row is printed with no cells, as GET rows?eid answers.
  const one = await runCli(['export', ...table, '--eid', '["b", -7]']);
  t.equal(one.code, 0, one.stderr);
  t.equal(one.stdout, lines(all.filter((d) => JSON.stringify(idOf(d)) === '["b",-7]')));
  t.equal(
    (await runCli(['scan', ...table, '--eid', '["b", -7]', '--cols', 'f:n-7'])).stdout,
    '{"entityId":["b",-7],"cells":{"f":{"n-7":[{"timestamp":6,"value":"x","writer_schema":0}]}}}\n',
  );
  t.equal((await runCli(['export', ...table, '--eid', '["zz", 3]'])).stdout, '{"entityId":["zz",3],"cells":{}}\r\n');
  t.equal((await runCli(['export', ...table, '--eid', '["b", -7]', '--limit', '0'])).stdout, '');

  const both = await runCli(['export', ...table, '--eid', '["a", []]', '--start-eid', '["a", 1]']);
  t.equal(both.code, 2, '--eid with a range option is bad usage');
  t.equal(
    both.stderr,
    'rowgate export: give either --eid or --start-eid/--end-eid, not both (an entity id selects one row or the rows matching its wildcards)\n',
  );
  const badWildcard = await runCli(['scan', ...data, '--instance', 'w', '--table', 'pairs', '--eid', '[[], "x"]']);
  t.equal(badWildcard.code, 2);
  t.match(badWildcard.stderr, /^rowgate scan: /);
});

t.test('--config names the store for every command', async (t) => {
  const dir = tempDir(t);
  const config = writeFile(dir, 'rowgate.yaml', `store:\n  kind: lmdb\n  path: ${join(dir, 'cfgdata')}\n`);
  const created = await runCli(['create-table', '--config', config, '--instance', 'c', '--layout', writeFile(dir, 'n.json', RAW_LAYOUT)]);
  t.equal(created.code, 0, created.stderr);
  t.ok(existsSync(join(dir, 'cfgdata')), 'the store of the configuration file');
  t.equal((await runCli(['ls', '--config', config])).stdout, 'c\n');
  t.equal(
    (
      await runCli(['import', '--config', config, '--instance', 'c', '--table', 'notes', '-'], {
        input: '{"entityId":"rowkey=a","cells":{"n":{"text":[{"value":"x","timestamp":1}]}}}',
      })
    ).code,
    0,
  );
  t.equal(
    (await runCli(['export', '--config', config, '--instance', 'c', '--table', 'notes'])).stdout,
    '{"entityId":"rowkey=a","cells":{"n":{"text":[{"timestamp":1,"value":"x","writer_schema":0}]}}}\r\n',
  );
  t.equal((await runCli(['ls', '--config', config, '--data', join(dir, 'cfgdata')])).stdout, 'c\n', '--data overrides store.path');

  // A Bigtable store named by the file is configured from it (no network here: the config is incomplete).
  const bigtable = writeFile(dir, 'bt.yaml', 'store:\n  kind: bigtable\n  projectId: p\n');
  const bt = await runCli(['ls', '--config', bigtable]);
  t.equal(bt.code, 2, 'an incomplete Bigtable configuration exits 2');
  t.match(bt.stderr, /^rowgate ls: configuration store\.instanceId/);
  const badConfig = await runCli(['ls', '--config', writeFile(dir, 'bad.yaml', 'stroe:\n  kind: lmdb\n')]);
  t.equal(badConfig.code, 2, 'a bad configuration exits 2');
  t.match(badConfig.stderr, /^rowgate ls: configuration stroe: unknown key/);
});

t.test('usage', async (t) => {
  const help = await runCli(['--help']);
  t.equal(help.code, 0);
  for (const command of ['serve', 'create-table', 'import', 'export', 'ls', 'get', 'scan']) t.match(help.stdout, new RegExp(`\\n  ${command} `));
  const exportHelp = await runCli(['export', '--help']);
  t.equal(exportHelp.code, 0);
  for (const option of ['--out', '--cols', '--versions', '--timerange', '--limit', '--eid', '--start-eid', '--end-eid', '--config', '--data'])
    t.match(exportHelp.stdout, option);
  const version = await runCli(['--version']);
  t.match(version.stdout, /^\d+\.\d+\.\d+\n$/);
  const unknown = await runCli(['frobnicate']);
  t.equal(unknown.code, 2);
  t.match(unknown.stderr, /unknown command 'frobnicate'/);
  const missing = await runCli(['get', '--instance', 'a', '--table', 'b']);
  t.equal(missing.code, 2);
  t.match(missing.stderr, /required option '--eid <eid>' not specified/);
  const extra = await runCli(['ls', 'extra']);
  t.equal(extra.code, 2);
});

t.test('a --data that holds no store is refused by the commands that read, naming it; a file is named as a file', async (t) => {
  const dir = tempDir(t);
  const empty = join(dir, 'not-a-store');
  mkdirSync(empty);
  writeFile(empty, 'notes.txt', 'hello\n');
  for (const args of [
    ['ls'],
    ['get', '--instance', 'default', '--table', 'users', '--eid', '[1]'],
    ['scan', '--instance', 'default', '--table', 'users'],
    ['export', '--instance', 'default', '--table', 'users', '--out', join(dir, 'out.json')],
  ]) {
    const r = await runCli([...args, '--data', empty]);
    t.equal(r.code, 1, `${args[0]}: exit 1`);
    t.match(r.stderr, /data directory .*not-a-store holds no rowgate store \(no data\.mdb\)/, `${args[0]}: names the folder`);
  }
  t.same(readdirSync(empty), ['notes.txt'], 'nothing was created there');
  const file = writeFile(dir, 'a-file', 'x');
  const r = await runCli(['ls', '--data', file]);
  t.equal(r.code, 1);
  t.match(r.stderr, /data directory .*a-file is a file, not a directory/);
  t.notMatch(r.stderr, /EEXIST/);

  // serve over an existing empty folder says it starts an empty store without the demo data.
  const fresh = join(dir, 'fresh');
  mkdirSync(fresh);
  const s = await serveCli(t, ['--data', fresh, '--port', '0', '--log-level', 'info']);
  await s.waitLog(/"level":40,[^\n]*fresh[^\n]*empty store without demo data/);
  t.equal(await s.stop(), 0);
});

t.test('export takes the format from --out: .ndjson and .jsonl are ndjson, .avro avro; a --format that contradicts it is refused', async (t) => {
  const dir = tempDir(t);
  const data = ['--data', join(dir, 'data')];
  await runCli(['create-table', ...data, '--instance', 'x', '--layout', writeFile(dir, 'u.json', USERS_LAYOUT_JSON)]);
  const rows = Array.from({ length: 20 }, (_, i) => JSON.stringify(demoRow(i)));
  t.equal((await runCli(['import', ...data, '--instance', 'x', '--table', 'users', '-'], { input: rows.join('\n') })).code, 0);
  const table = [...data, '--instance', 'x', '--table', 'users'];
  const ndjson = (await runCli(['export', ...table, '--format', 'ndjson'])).stdout;
  for (const name of ['a.ndjson', 'a.jsonl', 'A.NDJSON']) {
    const r = await runCli(['export', ...table, '--out', join(dir, name)]);
    t.equal(r.code, 0, r.stderr);
    t.equal(readFileSync(join(dir, name), 'utf8'), ndjson, `${name}: LF-framed rows`);
  }
  const avro = await runCli(['export', ...table, '--out', join(dir, 'a.avro')]);
  t.equal(avro.code, 0, avro.stderr);
  t.equal(readFileSync(join(dir, 'a.avro')).subarray(0, 4).toString('latin1'), 'Obj\x01', 'an Avro object container file');
  const json = await runCli(['export', ...table, '--out', join(dir, 'a.json')]);
  t.match(readFileSync(join(dir, 'a.json'), 'utf8'), /\r\n$/, 'any other name: the row stream (CR LF)');
  t.equal(json.code, 0);

  const clash = await runCli(['export', ...table, '--format', 'json', '--out', join(dir, 'b.avro')]);
  t.equal(clash.code, 2);
  t.match(clash.stderr, /^rowgate export: --out .*b\.avro names an avro file, but --format is json/);
  t.notOk(existsSync(join(dir, 'b.avro')) || existsSync(join(dir, 'b.avro.partial')), 'nothing written');
});

t.test('usage errors carry the rowgate <command>: prefix, and a mistyped required flag is named with a suggestion', async (t) => {
  const typo = await runCli(['export', '--instnace', 'x', '--table', 'users']);
  t.equal(typo.code, 2);
  t.match(typo.stderr, /^rowgate export: unknown option '--instnace'\n\(Did you mean --instance\?\)/, 'the typo, not the missing --instance');
  const missing = await runCli(['get', '--instance', 'a', '--table', 'b']);
  t.match(missing.stderr, /^rowgate get: required option '--eid <eid>' not specified\n/);
  const unknown = await runCli(['frobnicate']);
  t.match(unknown.stderr, /^rowgate: unknown command 'frobnicate'/);
});

t.test('a 401 from --url points at --token and ROWGATE_TOKEN', async (t) => {
  const h = await startGateway({ auth: { tokens: [{ name: 'a', sha256: sha256Hex('secret-token-0123'), scopes: { '*': '*' } }] } });
  t.teardown(() => h.close());
  for (const args of [['export', '--instance', 'default', '--table', 'sample_table'], ['ls']]) {
    const r = await runCli([...args, '--url', h.base]);
    t.equal(r.code, 1, `${args[0]}: exit 1`);
    t.match(r.stderr, /401[^\n]*give the gateway's token with --token or the ROWGATE_TOKEN environment variable/, `${args[0]}: says how to give a token`);
    const wrong = await runCli([...args, '--url', h.base, '--token', 'not-it']);
    t.match(wrong.stderr, /401[^\n]*the token given \(--token or ROWGATE_TOKEN\) was refused/, `${args[0]}: a wrong token is named as such`);
  }
});
