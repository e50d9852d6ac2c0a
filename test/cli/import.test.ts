/**
 * `rowgate import` failures: a bad line stops the import with its line number and what is wrong;
 * batches before it are committed, nothing of its own batch is written. Also the accepted input
 * forms (stdin, CR LF, blank lines) and counter increments.
 */
import { join } from 'node:path';
import t from 'tap';
import { demoRow } from '../../lib/demo/demo-data.js';
import { ensureBuilt, runCli, writeFile } from './helpers.js';
import { exportedUids, freshTable, line } from './import-fixtures.js';

t.before(ensureBuilt);

t.test('a bad line in a later batch: earlier batches stay, nothing of its batch is written', async (t) => {
  const { dir, flags } = await freshTable(t);
  const lines = [];
  for (let uid = 1; uid <= 30; uid++) lines.push(line(uid));
  // Line 26: age is an int column.
  lines[25] = '{"entityId":[26],"cells":{"info":{"age":[{"value":"twenty-six"}]}}}';
  const file = writeFile(dir, 'rows.ndjson', `${lines.join('\n')}\n`);
  const r = await runCli(['import', ...flags, '--batch', '10', file]);
  t.equal(r.code, 1);
  t.equal(r.stdout, '', 'no summary line on failure');
  t.match(r.stderr, /^rowgate import: line 26: value of column info:age does not match its writer schema "int": expected int, got "twenty-six"\n/);
  t.match(
    r.stderr,
    /\nrowgate import: rows before line 21 were imported \(20 rows, \d+ cells\); nothing from line 21 on was written\nrowgate import: run the same command with --resume to continue from line 21 \(.*rows\.ndjson\.import-progress says where\)\n$/,
  );
  t.notMatch(r.stderr, /\n\s+at /, 'no stack trace');
  t.same(
    await exportedUids(flags),
    Array.from({ length: 20 }, (_, i) => i + 1),
    'exactly the rows of lines 1-20',
  );
  const row21 = await runCli(['get', ...flags, '--eid', '[21]']);
  t.equal(row21.stdout, '{"entityId":[21],"cells":{}}\n', 'the row of line 21 (same batch as the bad line) was not written');
});

t.test('several parsing threads: batches written in input order, a bad line stops at its batch whichever thread is ahead', async (t) => {
  const { dir, flags } = await freshTable(t);
  const lines = [];
  for (let uid = 1; uid <= 400; uid++) lines.push(line(uid));
  const whole = writeFile(dir, 'whole.ndjson', `${lines.join('\n')}\n`);
  // Batches of 7 rows over 4 threads: later batches are often parsed before earlier ones.
  const ok = await runCli(['import', ...flags, '--batch', '7', '--threads', '4', whole]);
  t.equal(ok.code, 0, ok.stderr);
  t.match(ok.stdout, /^imported 400 rows, \d+ cells in /);
  const four = await runCli(['export', ...flags]);
  const { dir: dir1, flags: flags1 } = await freshTable(t);
  const one = await runCli(['import', ...flags1, '--batch', '7', '--threads', '1', writeFile(dir1, 'whole.ndjson', `${lines.join('\n')}\n`)]);
  t.equal(one.code, 0, one.stderr);
  t.equal((await runCli(['export', ...flags1])).stdout, four.stdout, 'the same table as with one thread');

  const { dir: dir2, flags: flags2 } = await freshTable(t);
  // Line 300 is bad: the batches before its batch (lines 295-301) are written, none after.
  const bad = [...lines];
  bad[299] = '{"entityId":[300],"cells":{"info":{"age":[{"value":"three hundred"}]}}}';
  const r = await runCli(['import', ...flags2, '--batch', '7', '--threads', '4', writeFile(dir2, 'bad.ndjson', `${bad.join('\n')}\n`)]);
  t.equal(r.code, 1);
  t.match(r.stderr, /^rowgate import: line 300: /);
  t.match(r.stderr, /rows before line 295 were imported \(294 rows, \d+ cells\)/);
  t.same(
    await exportedUids(flags2),
    Array.from({ length: 294 }, (_, i) => i + 1),
    'exactly the rows of lines 1-294',
  );
});

t.test('a bad line in the first batch: nothing is imported', async (t) => {
  const { dir, flags } = await freshTable(t);
  const file = writeFile(dir, 'rows.ndjson', [line(1), line(2), '{"entityId":[3], "cells": {', line(4)].join('\n'));
  const r = await runCli(['import', ...flags, file]);
  t.equal(r.code, 1);
  t.match(r.stderr, /^rowgate import: line 3: the row is not valid JSON: .* at position \d+\nrowgate import: nothing was imported\n$/);
  t.same(await exportedUids(flags), []);
});

t.test('each kind of bad line is named with its line number and what is wrong', async (t) => {
  const { dir, flags } = await freshTable(t);
  const cases: [string, RegExp][] = [
    ['[1, 2]', /line 2: a row must be a JSON object with entityId and cells/],
    ['{"cells":{}}', /line 2: entityId is missing/],
    ['{"entityId":"12","cells":{}}', /line 2: entityId must be a JSON array of components or a string starting with rowkey=/],
    ['{"entityId":["x"],"cells":{}}', /line 2: .*component/],
    ['{"entityId":[[]],"cells":{}}', /line 2: .*wildcard/],
    ['{"entityId":[5],"cells":{},"extra":1}', /line 2: unknown row field "extra"/],
    ['{"entityId":[5],"cells":{"nope":{"a":[{"value":1}]}}}', /line 2: Specified column does not exist: nope:a/],
    ['{"entityId":[5],"cells":{"info":{"nope":[{"value":1}]}}}', /line 2: Specified column does not exist: info:nope/],
    ['{"entityId":[5],"cells":{"info":{"age":{"value":1}}}}', /line 2: cells of column info:age must be a list of cells/],
    ['{"entityId":[5],"cells":{"info":{"age":[{"value":1,"ts":5}]}}}', /line 2: unknown field "ts" in cell 0 of column info:age/],
    [
      '{"entityId":[5],"cells":{"info":{"age":[{"value":1,"timestamp":-4}]}}}',
      /line 2: timestamp of column info:age must be an integer of milliseconds from 0 to 9223372036854775807, got -4/,
    ],
    ['{"entityId":[5],"cells":{"info":{"age":[{"value":1,"writer_schema":999}]}}}', /line 2: writer_schema 999 of column info:age is not in the schema table/],
    ['{"entityId":[5],"cells":{"logins":{"web":[{"value":"many"}]}}}', /line 2: counter value of column logins:web must be a 64-bit integer/],
  ];
  for (const [bad, expected] of cases) {
    const file = writeFile(dir, 'one.ndjson', `${line(1)}\n${bad}\n${line(3)}\n`);
    const r = await runCli(['import', ...flags, file]);
    t.equal(r.code, 1, bad);
    t.match(r.stderr, expected, bad);
    t.match(r.stderr, /nothing was imported\n$/, bad);
  }
  t.same(await exportedUids(flags), [], 'nothing written by any of them');
});

t.test('a key repeated in one object is refused naming the key and its position, plain lines too, nothing imported', async (t) => {
  const { dir, flags } = await freshTable(t);
  // Lines of the plain shape (string and int columns, one cell each) the parsing threads pack
  // straight from their bytes once their columns are warm: 40 before each bad line warm them.
  const plain = (uid: number, cells: string, entityId = `[${uid}]`) => `{"entityId":${entityId},"cells":${cells}}`;
  const name = (v: string, ts = 5) => `{"value":"${v}","timestamp":${ts}}`;
  const warm = Array.from({ length: 40 }, (_, i) => plain(i + 1, `{"info":{"name":[${name(`n${i + 1}`)}],"age":[{"value":${i},"timestamp":5}]}}`));
  const cases: [string, string, string][] = [
    ['a repeated family', plain(100, `{"info":{"name":[${name('a')}]},"info":{"age":[{"value":1,"timestamp":5}]}}`), 'info'],
    ['a repeated column', plain(100, `{"info":{"name":[${name('a')}],"name":[${name('b', 6)}]}}`), 'name'],
    ['a repeated value', plain(100, '{"info":{"name":[{"value":"a","value":"b","timestamp":5}]}}'), 'value'],
    ['a repeated timestamp', plain(100, '{"info":{"name":[{"value":"a","timestamp":5,"timestamp":6}]}}'), 'timestamp'],
    ['a repeated cells', `{"entityId":[100],"cells":{"info":{"name":[${name('a')}]}},"cells":{"info":{"name":[${name('b')}]}}}`, 'cells'],
    ['a repeated entityId', `{"entityId":[100],"entityId":[101],"cells":{"info":{"name":[${name('a')}]}}}`, 'entityId'],
  ];
  for (const [what, bad, repeated] of cases) {
    // The position of the key's second occurrence in the line.
    const position = bad.indexOf(`"${repeated}"`, bad.indexOf(`"${repeated}"`) + 1);
    const file = writeFile(dir, 'dup.ndjson', [...warm, bad, plain(200, `{"info":{"name":[${name('after')}]}}`)].join('\n') + '\n');
    const r = await runCli(['import', ...flags, file]);
    t.equal(r.code, 1, `${what}: refused (${r.stdout.trim()})`);
    t.equal(
      r.stderr.split('\n')[0],
      `rowgate import: line 41: the row has the key "${repeated}" twice in one object, again at position ${position}: a key may appear only once`,
      what,
    );
    t.match(r.stderr, /nothing was imported\n$/, what);
  }
  t.same(await exportedUids(flags), [], 'nothing written by any of them');
});

t.test('standard input, CR LF, blank lines, counter increments', async (t) => {
  const { flags } = await freshTable(t);
  const input = `${line(1)}\r\n\r\n   \n${line(2)}\r\n{"entityId":[1],"cells":{"logins":{"web":[{"value":{"incr":5}}]}}}\n`;
  const before = JSON.parse(JSON.stringify(demoRow(1))) as { cells: { logins: Record<string, [{ value: number }]> } };
  const r = await runCli(['import', ...flags, '-'], { input });
  t.equal(r.code, 0, r.stderr);
  // Rows/s as export reports them, and cells/s.
  t.match(r.stdout, /^imported 3 rows, \d+ cells in \d+\.\d\d s \(\d+ rows\/s, \d+ cells\/s\)\n$/);
  const web = await runCli(['get', ...flags, '--eid', '[1]', '--cols', 'logins:web']);
  const value = (JSON.parse(web.stdout) as { cells: { logins: { web: [{ value: number }] } } }).cells.logins.web[0].value;
  t.equal(value, (before.cells.logins.web?.[0].value ?? 0) + 5, 'the increment was applied to the imported counter');
  t.same(await exportedUids(flags), [1, 2]);

  const empty = await runCli(['import', ...flags, '-'], { input: '' });
  t.equal(empty.code, 0);
  t.match(empty.stdout, /^imported 0 rows, 0 cells in/);
});

t.test(
  'a batch whose rows are packed until an increment is parsed again as rows: every row and the increment are written, a later bad line still names its line',
  async (t) => {
    const { dir, flags } = await freshTable(t);
    // One batch of 6: rows 1-2 packed as parsed, the increment on line 3 sends the whole batch through Store.write.
    const lines = [line(1), line(2), '{"entityId":[1],"cells":{"logins":{"web":[{"value":{"incr":7}}]}}}', line(4), line(5), line(6)];
    const file = writeFile(dir, 'rows.ndjson', `${lines.join('\n')}\n`);
    const r = await runCli(['import', ...flags, '--batch', '6', '--threads', '1', file]);
    t.equal(r.code, 0, r.stderr);
    t.match(r.stdout, /^imported 6 rows, /);
    t.same(await exportedUids(flags), [1, 2, 4, 5, 6]);
    const web = await runCli(['get', ...flags, '--eid', '[1]', '--cols', 'logins:web']);
    const before = demoRow(1) as { cells: { logins?: Record<string, [{ value: number }]> } };
    const value = (JSON.parse(web.stdout) as { cells: { logins: { web: [{ value: number }] } } }).cells.logins.web[0].value;
    t.equal(value, (before.cells.logins?.web?.[0].value ?? 0) + 7, 'the increment applied once, after line 1');

    const { dir: dir2, flags: flags2 } = await freshTable(t);
    const bad = [...lines.slice(0, 4), '{"entityId":[5],"cells":{"info":{"age":[{"value":"five"}]}}}', line(6)];
    const badFile = writeFile(dir2, 'rows.ndjson', `${bad.join('\n')}\n`);
    const b = await runCli(['import', ...flags2, '--batch', '6', '--threads', '1', badFile]);
    t.equal(b.code, 1);
    t.match(b.stderr, /^rowgate import: line 5: value of column info:age does not match its writer schema "int"/);
    t.match(b.stderr, /nothing was imported\n$/);
    t.same(await exportedUids(flags2), [], 'nothing of the batch written');
  },
);

t.test('an unknown table, a missing file, a missing data directory', async (t) => {
  const { dir, flags } = await freshTable(t);
  const file = writeFile(dir, 'rows.ndjson', `${line(1)}\n`);
  const noTable = await runCli(['import', ...flags.slice(0, -2), '--table', 'nope', file]);
  t.equal(noTable.code, 1);
  t.match(noTable.stderr, /^rowgate import: table nope not found in instance it\n$/);
  const noFile = await runCli(['import', ...flags, join(dir, 'missing.ndjson')]);
  t.equal(noFile.code, 1);
  t.match(noFile.stderr, /^rowgate import: cannot read .*missing\.ndjson: ENOENT/);
  const noData = await runCli(['import', '--data', join(dir, 'elsewhere'), '--instance', 'it', '--table', 'users', file]);
  t.equal(noData.code, 1);
  t.match(noData.stderr, /data directory .*elsewhere does not exist/);
  const usage = await runCli(['import', ...flags]);
  t.equal(usage.code, 2, 'the file argument is required');
  t.match(usage.stderr, /missing required argument 'file'/);
});

t.test('a batch the store refuses (counter overflow) stops the import: earlier batches stay, no later batch is written', async (t) => {
  const { dir, flags } = await freshTable(t);
  // Batches of 2 lines: 1-2 packed for the store, 3-4 carries an increment (written through
  // Store.write, alone) that overflows, 5-6 would be packed again.
  const lines = [
    '{"entityId":[1],"cells":{"logins":{"web":[{"value":9223372036854775807,"timestamp":5}]}}}',
    line(2),
    '{"entityId":[1],"cells":{"logins":{"web":[{"value":{"incr":1}}]}}}',
    line(4),
    line(5),
    line(6),
  ];
  const file = writeFile(dir, 'rows.ndjson', `${lines.join('\n')}\n`);
  const r = await runCli(['import', ...flags, '--batch', '2', file]);
  t.equal(r.code, 1);
  t.match(
    r.stderr,
    /^rowgate import: writing lines 3-4 failed: incrementing counter logins:web by 1 overflows a 64-bit integer\nrowgate import: rows before line 3 were imported \(2 rows, \d+ cells\); nothing from line 3 on was written\nrowgate import: run the same command with --resume to continue from line 3 \(.*\)\n$/,
  );
  t.same(await exportedUids(flags), [2], 'lines 1-2 only (row 1 has no info:email)');
});
