/**
 * The crash between an import batch's commit and the rewrite of FILE.import-progress: the file is
 * then one batch behind what is committed. On the embedded store the record is also committed in
 * the batch's transaction (a Store BatchMarker), so --resume must start after the committed batch
 * and not apply it again: the counter the batches increment counts each increment line once, and
 * the reject files hold each refused line once. The crash is reproduced exactly: an import that
 * stops at a bad line leaves both records after the same batch, then the file is put back one
 * batch (what a kill between the two writes leaves).
 */
import { readFileSync, writeFileSync } from 'node:fs';
import t from 'tap';
import type { ImportProgress } from '../../tools/support/import-progress.js';
import { ensureBuilt, runCli, writeFile } from './helpers.js';
import { exportedUids, freshTable, line, usersTable } from './import-fixtures.js';

t.before(ensureBuilt);

const LINES = 100;
const BATCH = 20;
/** Every 5th line increments the counter row's logins:web by 1 (so no batch is packed alone). */
const COUNTER_UID = 999_999;
const incrementLine = `{"entityId":[${COUNTER_UID}],"cells":{"logins":{"web":[{"value":{"incr":1}}]}}}`;

function lines(badAt: number | undefined, refusedAt: number[] = []): string {
  const out: string[] = [];
  for (let n = 1; n <= LINES; n++) {
    if (n === badAt) out.push(`{"entityId":[${n}],"cells":{"info":{"age":[{"value":"bad"}]}}}`);
    else if (refusedAt.includes(n)) out.push(`{"entityId":[${n}],"cells":{"info":{"age":[{"value":"refused"}]}}}`);
    else out.push(n % 5 === 0 ? incrementLine : line(n));
  }
  return `${out.join('\n')}\n`;
}

async function counter(flags: string[]): Promise<number> {
  const r = await runCli(['get', ...flags, '--eid', `[${COUNTER_UID}]`, '--cols', 'logins:web']);
  return (JSON.parse(r.stdout) as { cells: { logins?: { web: [{ value: number }] } } }).cells.logins?.web[0].value ?? 0;
}

/** The file record put back by one batch: as a kill right after the last committed batch's commit leaves it. */
function oneBatchBehind(path: string, cellsOfBatch: number): ImportProgress {
  const now = JSON.parse(readFileSync(path, 'utf8')) as ImportProgress;
  const behind: ImportProgress = { ...now, nextLine: now.nextLine - BATCH, rows: now.rows - BATCH, cells: now.cells - cellsOfBatch };
  writeFileSync(path, `${JSON.stringify(behind)}\n`);
  return behind;
}

t.test('a crash between a batch commit and its progress file: --resume starts after the committed batch, counters counted once', async (t) => {
  const { dir, flags } = await freshTable(t);
  // Line 70 is bad: lines 1-60 (three batches) are committed, the import stops at lines 61-80.
  const file = writeFile(dir, 'rows.ndjson', lines(70));
  const first = await runCli(['import', ...flags, '--batch', String(BATCH), file]);
  t.equal(first.code, 1);
  t.match(first.stderr, /continue from line 61/);
  t.equal(await counter(flags), 12, 'lines 5, 10, ..., 60 incremented the counter');
  const record = `${file}.import-progress`;
  // The cells lines 41-60 hold, as an import of them alone counts them.
  const probe = await usersTable(dir, 'probe');
  const alone = await runCli(['import', ...probe, '-'], { input: lines(undefined).split('\n').slice(40, 60).join('\n') });
  t.equal(alone.code, 0, alone.stderr);
  const batch3Cells = Number(/imported \d+ rows, (\d+) cells/.exec(alone.stdout)?.[1]);
  const behind = oneBatchBehind(record, batch3Cells);
  t.equal(behind.nextLine, 41, 'the file now says line 41, as a kill between the commit and the rewrite leaves it');

  writeFile(dir, 'rows.ndjson', lines(undefined));
  const resumed = await runCli(['import', ...flags, '--batch', String(BATCH), '--resume', file]);
  t.equal(resumed.code, 0, resumed.stderr);
  t.match(
    resumed.stdout,
    new RegExp(`resumed at line 61 \\(60 rows, ${behind.cells + batch3Cells} cells`),
    'resumed after the committed batch, from the store record',
  );
  t.equal(await counter(flags), LINES / 5, `each of the ${LINES / 5} increment lines counted once`);
  t.same(
    await exportedUids(flags),
    Array.from({ length: LINES }, (_, i) => i + 1).filter((n) => n % 5 !== 0),
    'every row once (the counter row has no info:email to export)',
  );
  const again = await runCli(['import', ...flags, '--resume', file]);
  t.not(again.code, 0);
  t.match(again.stderr, /nothing to resume/, 'an import that ended well leaves nothing to resume, in the file or the store');
});

t.test('after the same crash with --max-bad-lines: the reject files are cut to the committed record, each refused line there once', async (t) => {
  const { dir, flags } = await freshTable(t);
  // Lines 23 and 47 are refused (--max-bad-lines), line 70 stops the import (over the limit of 2).
  const file = writeFile(dir, 'rows.ndjson', lines(undefined, [23, 47, 70, 71]));
  const rejects = `${dir}/rows.rejects`;
  const first = await runCli(['import', ...flags, '--batch', String(BATCH), '--max-bad-lines', '2', '--reject-file', rejects, file]);
  t.equal(first.code, 1);
  t.match(first.stderr, /continue from line 61/);
  const record = `${file}.import-progress`;
  const now = JSON.parse(readFileSync(record, 'utf8')) as ImportProgress;
  t.equal(now.refused, 2);
  // One batch behind: the record as it stood after lines 21-40 (23 refused), reject lengths included.
  const lineText = readFileSync(rejects, 'utf8').split('\n');
  const reasonText = readFileSync(`${rejects}.reasons`, 'utf8').split('\n');
  const behind: ImportProgress = {
    ...now,
    nextLine: 41,
    rows: now.rows - BATCH + 1,
    refused: 1,
    rejectLengths: { lines: Buffer.byteLength(`${lineText[0]}\n`), reasons: Buffer.byteLength(`${reasonText[0]}\n`) },
  };
  writeFileSync(record, `${JSON.stringify(behind)}\n`);

  writeFile(dir, 'rows.ndjson', lines(undefined, [23, 47]));
  const resumed = await runCli(['import', ...flags, '--batch', String(BATCH), '--max-bad-lines', '2', '--reject-file', rejects, '--resume', file]);
  t.equal(resumed.code, 0, resumed.stderr);
  t.match(resumed.stdout, /resumed at line 61/);
  t.match(resumed.stdout, /refused 2 lines/);
  t.same(
    readFileSync(`${rejects}.reasons`, 'utf8')
      .split('\n')
      .filter((l) => l !== '')
      .map((l) => l.split(':')[0]),
    ['line 23', 'line 47'],
    'each refused line once, in input order',
  );
  t.equal(await counter(flags), LINES / 5);
});
