/**
 * `rowgate import --max-bad-lines N`: bad lines of every kind the validator knows are refused to
 * the reject file (the lines as read) and its .reasons sibling (line number and the strict
 * import's reason), every good line is imported; the (N+1)th bad line stops the import as the
 * first one does without the option; --resume continues from the first line not committed
 * without counting a refused line twice or losing one.
 */
import { appendFileSync, existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import t from 'tap';
import { ensureBuilt, runCli, writeFile } from './helpers.js';
import { exportedUids, freshTable, line } from './import-fixtures.js';

t.before(ensureBuilt);

/** One bad line of each kind, and the reason the strict import gives for it. */
const BAD: readonly { readonly text: string; readonly reason: RegExp }[] = [
  { text: '{"entityId":[1001],"cells":{"info":{"name":[{"value":"a"}]}}', reason: /^the row is not valid JSON: / },
  { text: '{"entityId":[1002],"entityId":[1003],"cells":{}}', reason: /^the row has the key "entityId" twice in one object/ },
  { text: '{"entityId":[1004],"cells":{"nope":{"x":[{"value":"a"}]}}}', reason: /^Specified column does not exist: nope:x$/ },
  { text: '{"entityId":[1005],"cells":{"info":{"age":[{"value":"x"}]}}}', reason: /^value of column info:age does not match its writer schema "int"/ },
  { text: '{"entityId":[1006],"cells":{"info":{"age":[{"value":3,"timestamp":"soon"}]}}}', reason: /^timestamp of column info:age must be an integer/ },
  { text: '{"entityId":["x"],"cells":{"info":{"age":[{"value":3}]}}}', reason: /^component 'uid' \(index 0\) must be a LONG/ },
];

/** 66 lines: 60 good ones (uids 1-60 in order) and the bad ones at lines 5, 17, 23, 38, 44 and 59. */
function mixedInput(): { lines: string[]; badAt: number[] } {
  const lines: string[] = [];
  const badAt: number[] = [];
  const places = [5, 17, 23, 38, 44, 59];
  let uid = 1;
  for (let n = 1; lines.length < 66; n++) {
    const k = places.indexOf(n);
    if (k >= 0) {
      lines.push(BAD[k]!.text);
      badAt.push(n);
    } else lines.push(line(uid++));
  }
  return { lines, badAt };
}

function reasonsOf(path: string): { line: number; reason: string }[] {
  return readFileSync(path, 'utf8')
    .split('\n')
    .filter((x) => x !== '')
    .map((x) => {
      const m = /^line (\d+): (.*)$/.exec(x)!;
      return { line: Number(m[1]), reason: m[2]! };
    });
}

t.test('under --max-bad-lines every good line is imported and the reject file holds exactly the bad ones, with their reasons', async (t) => {
  const { dir, flags } = await freshTable(t);
  const { lines, badAt } = mixedInput();
  const file = writeFile(dir, 'rows.ndjson', `${lines.join('\n')}\n`);
  // Batches of 10 over 2 threads: rejects of several batches and parts, kept in input order.
  const r = await runCli(['import', ...flags, '--batch', '10', '--threads', '2', '--max-bad-lines', '6', file]);
  t.equal(r.code, 0, r.stderr);
  t.match(r.stdout, new RegExp(`^imported 60 rows, \\d+ cells in .*; refused 6 lines, in ${file}\\.rejects \\(reasons in ${file}\\.rejects\\.reasons\\)\\n$`));
  t.same(
    await exportedUids(flags),
    Array.from({ length: 60 }, (_, i) => i + 1),
    'every good line, read back',
  );
  t.equal(readFileSync(`${file}.rejects`, 'utf8'), BAD.map((b) => `${b.text}\n`).join(''), 'the bad lines as they were, in input order');
  const reasons = reasonsOf(`${file}.rejects.reasons`);
  t.same(
    reasons.map((x) => x.line),
    badAt,
    'one reason a refused line, with its line number',
  );
  for (let k = 0; k < BAD.length; k++) t.match(reasons[k]!.reason, BAD[k]!.reason, BAD[k]!.text);
  t.notOk(existsSync(`${file}.import-progress`), 'no progress record after an import that ended well');

  // The same reason text as the strict import prints.
  const { dir: dir2, flags: flags2 } = await freshTable(t);
  const strict = await runCli(['import', ...flags2, writeFile(dir2, 'one.ndjson', `${line(1)}\n${BAD[3]!.text}\n`)]);
  t.equal(strict.code, 1);
  t.match(strict.stderr, `rowgate import: line 2: ${reasons[3]!.reason}\n`);
});

t.test('the reject lines import once fixed, as they are', async (t) => {
  const { dir, flags } = await freshTable(t);
  const file = writeFile(dir, 'rows.ndjson', `${line(1)}\n${BAD[3]!.text}\n${line(2)}\n`);
  const r = await runCli(['import', ...flags, '--max-bad-lines', '1', '--reject-file', join(dir, 'refused.ndjson'), file]);
  t.equal(r.code, 0, r.stderr);
  t.notOk(existsSync(`${file}.rejects`), 'the reject file is where --reject-file says');
  const rejected = readFileSync(join(dir, 'refused.ndjson'), 'utf8');
  const fixed = writeFile(dir, 'fixed.ndjson', rejected.replace('"value":"x"', '"value":41'));
  const again = await runCli(['import', ...flags, fixed]);
  t.equal(again.code, 0, again.stderr);
  const got = await runCli(['get', ...flags, '--eid', '[1005]', '--cols', 'info:age']);
  t.match(got.stdout, /"value":41/);
});

t.test('no line refused: no reject file is left', async (t) => {
  const { dir, flags } = await freshTable(t);
  const file = writeFile(dir, 'rows.ndjson', `${line(1)}\n${line(2)}\n`);
  const r = await runCli(['import', ...flags, '--max-bad-lines', '3', file]);
  t.equal(r.code, 0, r.stderr);
  t.match(r.stdout, /^imported 2 rows, \d+ cells in [^;]*\n$/, 'the summary names no refused lines');
  t.notOk(existsSync(`${file}.rejects`));
  t.notOk(existsSync(`${file}.rejects.reasons`));
});

t.test('N+1 bad lines stop the import at the batch of the last one; --resume continues without counting a refused line twice', async (t) => {
  const { dir, flags } = await freshTable(t);
  const { lines, badAt } = mixedInput();
  const file = writeFile(dir, 'rows.ndjson', `${lines.join('\n')}\n`);
  const args = ['import', ...flags, '--batch', '10', '--threads', '2', '--max-bad-lines', '5', file];
  const r = await runCli(args);
  t.equal(r.code, 1);
  t.equal(r.stdout, '');
  // The 6th bad line is line 59, in the batch of lines 51-60: lines 1-50 (45 good rows) are committed.
  t.match(r.stderr, /^rowgate import: line 59: component 'uid' \(index 0\) must be a LONG/);
  t.match(r.stderr, /\nrowgate import: more than 5 bad lines \(--max-bad-lines 5\); refused 5 lines, in .*rows\.ndjson\.rejects /);
  t.match(r.stderr, /\nrowgate import: rows before line 51 were imported \(45 rows, \d+ cells\); nothing from line 51 on was written\n/);
  t.match(r.stderr, /\nrowgate import: run the same command with --resume to continue from line 51 /);
  t.same(
    await exportedUids(flags),
    Array.from({ length: 45 }, (_, i) => i + 1),
    'the rows of lines 1-50',
  );
  t.same(
    reasonsOf(`${file}.rejects.reasons`).map((x) => x.line),
    badAt.slice(0, 5),
    'the refused lines of the committed batches',
  );

  // What a crash between appending a batch's refused lines and its progress record would leave.
  appendFileSync(`${file}.rejects`, `${BAD[5]!.text}\n`);
  appendFileSync(`${file}.rejects.reasons`, 'line 59: appended by a batch never committed\n');
  // Line 59 fixed (now a good row of uid 1000), then resumed: lines 51-66 only.
  const fixed = [...lines];
  fixed[58] = line(1000);
  writeFile(dir, 'rows.ndjson', `${fixed.join('\n')}\n`);
  const resumed = await runCli([...args.slice(0, -1), '--resume', file]);
  t.equal(resumed.code, 0, resumed.stderr);
  t.match(resumed.stdout, /^imported 16 rows, \d+ cells in .*; resumed at line 51 \(45 rows, \d+ cells before it\); refused 5 lines, in /);
  t.same(await exportedUids(flags), [...Array.from({ length: 60 }, (_, i) => i + 1), 1000], 'every good line, once');
  t.same(
    reasonsOf(`${file}.rejects.reasons`).map((x) => x.line),
    badAt.slice(0, 5),
    'the 5 refused lines, once each',
  );
  t.equal(
    readFileSync(`${file}.rejects`, 'utf8'),
    BAD.slice(0, 5)
      .map((b) => `${b.text}\n`)
      .join(''),
  );
  t.notOk(existsSync(`${file}.import-progress`), 'the record is gone once the import ended well');

  const nothing = await runCli([...args.slice(0, -1), '--resume', file]);
  t.equal(nothing.code, 1);
  t.match(nothing.stderr, /^rowgate import: nothing to resume: .*rows\.ndjson\.import-progress does not exist/);
});

t.test('--resume refuses standard input; --max-bad-lines refuses a negative count; --reject-file wants --max-bad-lines', async (t) => {
  const { flags } = await freshTable(t);
  const r = await runCli(['import', ...flags, '--resume', '-']);
  t.equal(r.code, 2);
  t.match(r.stderr, /^rowgate import: --resume needs a FILE/);
  const n = await runCli(['import', ...flags, '--max-bad-lines', '-1', '-']);
  t.equal(n.code, 2);
  t.match(n.stderr, /--max-bad-lines/);
  const alone = await runCli(['import', ...flags, '--reject-file', 'x.rejects', '-']);
  t.equal(alone.code, 2);
  t.match(alone.stderr, /^rowgate import: --reject-file needs --max-bad-lines N/);
});
