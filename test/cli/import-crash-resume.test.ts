/**
 * `rowgate import --max-bad-lines N` killed (SIGKILL) mid-load, then run again with --resume:
 * the table ends as one uninterrupted import of the file leaves it (the rows carry explicit
 * timestamps, so a batch imported twice writes the same cells), and the reject files hold each
 * bad line exactly once, in input order, whatever moment the kill fell on.
 */
import { once } from 'node:events';
import { existsSync, readFileSync } from 'node:fs';
import { setTimeout as sleep } from 'node:timers/promises';
import t from 'tap';
import { demoRow } from '../../lib/demo/demo-data.js';
import { ensureBuilt, runCli, startCli, tempDir, writeFile } from './helpers.js';
import { usersTable } from './import-fixtures.js';

t.before(ensureBuilt);

const LINES = 3000;
const BATCH = 20;

/** LINES lines: demo rows, every 97th line a value the int column refuses. */
function input(): { text: string; bad: string[] } {
  const lines: string[] = [];
  const bad: string[] = [];
  for (let n = 1; n <= LINES; n++) {
    if (n % 97 === 0) {
      const b = `{"entityId":[${n}],"cells":{"info":{"age":[{"timestamp":5,"value":"n${n}"}]}}}`;
      bad.push(b);
      lines.push(b);
    } else lines.push(JSON.stringify(demoRow(n)));
  }
  return { text: `${lines.join('\n')}\n`, bad };
}

async function exported(flags: string[]): Promise<string> {
  const r = await runCli(['export', ...flags]);
  if (r.code !== 0) throw new Error(r.stderr);
  return r.stdout;
}

for (const round of [1, 2]) {
  t.test(`killed mid-load and resumed (round ${round}): the table and the reject file as one uninterrupted import leaves them`, async (t) => {
    const dir = tempDir(t);
    const { text, bad } = input();
    const file = writeFile(dir, 'rows.ndjson', text);
    // One parsing thread: the schema table's ids of the record and array columns are given in the
    // order a thread first meets them, and the two tables are compared byte for byte.
    const args = (flags: string[]): string[] => ['import', ...flags, '--batch', String(BATCH), '--threads', '1', '--max-bad-lines', '1000', file];

    const flags = await usersTable(dir, 'killed');
    const child = startCli(args(flags));
    let output = '';
    child.stdout!.on('data', (b: Buffer) => (output += b.toString()));
    child.stderr!.on('data', (b: Buffer) => (output += b.toString()));
    const exited = once(child, 'exit');
    // Wait (at most 2,000 polls) until a few batches are recorded, then kill it a little later.
    const progress = `${file}.import-progress`;
    const wantLine = round * 500;
    for (let i = 0; i < 2000 && child.exitCode === null; i++) {
      if (existsSync(progress) && (JSON.parse(readFileSync(progress, 'utf8')) as { nextLine: number }).nextLine > wantLine) break;
      await sleep(5);
    }
    await sleep(round * 7);
    child.kill('SIGKILL');
    const [, signal] = (await exited) as [number | null, string | null];
    if (signal !== 'SIGKILL') t.comment(`the import ended before the kill (${output.trim()}): nothing to resume this round`);
    else {
      t.ok(existsSync(progress), 'the progress record is left');
      const resumed = await runCli([...args(flags), '--resume']);
      t.equal(resumed.code, 0, resumed.stderr);
      t.match(resumed.stdout, new RegExp(`; resumed at line \\d+ \\(\\d+ rows, \\d+ cells before it\\); refused ${bad.length} lines, in `));
    }
    t.notOk(existsSync(progress), 'no progress record once the import ended well');
    t.equal(readFileSync(`${file}.rejects`, 'utf8'), bad.map((b) => `${b}\n`).join(''), 'each bad line once, in input order');
    const reasons = readFileSync(`${file}.rejects.reasons`, 'utf8').trimEnd().split('\n');
    t.equal(reasons.length, bad.length);

    const whole = await usersTable(dir, 'whole');
    const ok = await runCli(args(whole).map((a) => (a === file ? writeFile(dir, 'again.ndjson', text) : a)));
    t.equal(ok.code, 0, ok.stderr);
    t.equal(await exported(flags), await exported(whole), 'the same table as one uninterrupted import');
  });
}
