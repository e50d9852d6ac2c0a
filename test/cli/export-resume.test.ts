/**
 * Interrupted exports and --resume: whatever prefix an interrupted export left in FILE.partial
 * (cut anywhere, mid-row included, as a kill leaves it), --resume finishes it to exactly the
 * uninterrupted export, locally and with --url --parallel; a real SIGKILL and a Ctrl-C (SIGINT,
 * which says how to continue and exits 130) mid-export resume the same way; a leftover
 * FILE.partial is never silently overwritten.
 */
import { spawn } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { hostname } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import t from 'tap';
import { raw } from '../http/harness.js';
import { filledGateway, slowProxy } from './export-fixtures.js';
import { CLI, ensureBuilt, ROOT, runCli, tempDir } from './helpers.js';

t.before(ensureBuilt);

const TABLE = ['--instance', 'default', '--table', 'sample_table'];
const ROWS_PATH = '/v1/instances/default/tables/sample_table/rows';

/** Deterministic cut points: a simple LCG, so a failure can be replayed. */
function cutPoints(size: number, n: number, seed: number): number[] {
  const out: number[] = [];
  let x = seed;
  for (let i = 0; i < n; i++) {
    x = (x * 1103515245 + 12345) % 2147483648;
    out.push(x % size);
  }
  return [0, 1, ...out, size - 1];
}

t.test('--resume after a cut anywhere finishes the exact export, locally and with --url --parallel', async (t) => {
  const dir = tempDir(t);
  const h = await filledGateway(t, dir);
  const full = Buffer.from((await raw(h.base, 'GET', `${ROWS_PATH}?limit=-1`)).body, 'utf8');
  const runs: [string, string[]][] = [
    ['local', ['--data', join(dir, 'data')]],
    ['--url --parallel 3', ['--url', h.base, '--parallel', '3']],
  ];
  for (const [what, source] of runs) {
    for (const cut of cutPoints(full.length, 4, what.length)) {
      const out = join(dir, `resume-${cut}.json`);
      writeFileSync(`${out}.partial`, full.subarray(0, cut));
      const r = await runCli(['export', ...source, ...TABLE, '--out', out, '--resume']);
      t.equal(r.code, 0, r.stderr);
      t.ok(readFileSync(out).equals(full), `${what}, cut at byte ${cut}: the resumed file is the uninterrupted export`);
      t.notOk(existsSync(`${out}.partial`), 'the partial file became the file');
    }
  }
  // A limited export resumes to the same limit.
  const out = join(dir, 'limited.json');
  const limited = (await runCli(['export', '--url', h.base, ...TABLE, '--limit', '100'])).stdout;
  writeFileSync(`${out}.partial`, limited.slice(0, 5000));
  await runCli(['export', '--url', h.base, ...TABLE, '--limit', '100', '--out', out, '--resume']);
  t.equal(readFileSync(out, 'utf8'), limited, '--limit 100 resumed: still 100 rows');

  const left = join(dir, 'left.json');
  writeFileSync(`${left}.partial`, full.subarray(0, 10));
  const refused = await runCli(['export', '--url', h.base, ...TABLE, '--out', left]);
  t.equal(refused.code, 1);
  t.match(refused.stderr, /left\.json\.partial exists: an earlier export .* continue it with --resume, or delete it/);
  t.equal(readFileSync(`${left}.partial`).length, 10, 'the partial file is left as it was');
  const noOut = await runCli(['export', '--url', h.base, ...TABLE, '--resume']);
  t.equal(noOut.code, 2, '--resume without --out is bad usage');
  const wildcard = join(dir, 'wild.json');
  writeFileSync(`${wildcard}.partial`, full.subarray(0, 2000));
  t.equal(
    (await runCli(['export', '--url', h.base, ...TABLE, '--eid', '[[]]', '--out', wildcard, '--resume'])).code,
    2,
    '--resume of a wildcard export is refused',
  );
});

t.test(
  'spool folders: a killed export --url leaves its own, the next run or --resume removes it (only it); an export that needs none makes none',
  async (t) => {
    const dir = tempDir(t);
    const h = await filledGateway(t, dir);
    const full = Buffer.from((await raw(h.base, 'GET', `${ROWS_PATH}?limit=-1`)).body, 'utf8');
    const slow = await slowProxy(t, h.base);
    const spools = () => readdirSync(dir).filter((n) => n.startsWith('.rowgate-export-'));
    // The pid of a process that has exited.
    const dead = spawn(process.execPath, ['-e', '']);
    await new Promise((resolve) => dead.on('close', resolve));
    const host = hostname();
    // Not provably stale spools of killed.json: another output's, a live process's (this test's), another host's, an older name without an owner.
    const others = [
      `.rowgate-export-other.json@${host}-${dead.pid}-abcdef`,
      `.rowgate-export-killed.json@${host}-${process.pid}-abcdef`,
      `.rowgate-export-killed.json@elsewhere.example-${dead.pid}-abcdef`,
      '.rowgate-export-Ab12Cd',
    ];
    for (const o of others) mkdirSync(join(dir, o));
    const ours = () => spools().filter((n) => !others.includes(n));

    // Killed mid-export: its spool stays behind (nothing could remove it), named for its output and pid.
    const out = join(dir, 'killed.json');
    const args = ['export', '--url', slow, ...TABLE, '--parallel', '2', '--out', out];
    await interrupt(args, `${out}.partial`, Math.floor(full.length * 0.3), 'SIGKILL');
    t.equal(ours().length, 1, `the killed run left its spool: ${ours().join(', ')}`);
    t.match(ours()[0], new RegExp(`^\\.rowgate-export-killed\\.json@${host.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}-\\d+-[A-Za-z0-9]{6}$`));
    // --resume removes it (and its own when done); the others stay.
    const resumed = await runCli(['export', '--url', h.base, ...TABLE, '--parallel', '2', '--out', out, '--resume']);
    t.equal(resumed.code, 0, resumed.stderr);
    t.ok(readFileSync(out).equals(full), 'resumed: the uninterrupted export');
    t.match(resumed.stderr, /removed the spool folder .*killed\.json.* left by an export that did not finish/);
    t.same(ours(), [], '--resume removed the stale spool');
    t.same(spools().sort(), [...others].sort(), 'and nothing else');

    // The same for a next run without --resume (its partial file deleted, as the refusal advises).
    await interrupt(args, `${out}.partial`, Math.floor(full.length * 0.3), 'SIGKILL');
    t.equal(ours().length, 1, 'killed again: its spool');
    rmSync(`${out}.partial`);
    const again = await runCli(['export', '--url', h.base, ...TABLE, '--parallel', '2', '--out', out]);
    t.equal(again.code, 0, again.stderr);
    t.same(ours(), [], 'the next run removed it');
    t.same(spools().sort(), [...others].sort(), 'and nothing else');

    // An export that reads one range in turn (no --parallel, or a --limit) never spools: no folder,
    // not even while it runs or when it is killed.
    for (const extra of [[], ['--parallel', '3', '--limit', '2500']]) {
      const one = join(dir, `one-${extra.length}.json`);
      const child = spawn(process.execPath, [CLI, 'export', '--url', slow, ...TABLE, ...extra, '--out', one], { cwd: ROOT, stdio: 'ignore' });
      const closed = new Promise((resolve) => child.on('close', resolve));
      let seen = false;
      for (let waited = 0; waited < 30_000 && !(existsSync(`${one}.partial`) && statSync(`${one}.partial`).size > full.length * 0.4); waited += 5) {
        seen ||= ours().length > 0;
        await sleep(5);
      }
      child.kill('SIGKILL');
      await closed;
      t.notOk(seen || ours().length > 0, `${['export --url', ...extra].join(' ')}: no spool folder made`);
    }
  },
);

/** Starts an export, sends `signal` once FILE.partial holds at least `bytes`, and waits for the process. */
async function interrupt(args: string[], partial: string, bytes: number, signal: NodeJS.Signals): Promise<{ code: number | null; stderr: string }> {
  const child = spawn(process.execPath, [CLI, ...args], { cwd: ROOT, stdio: ['ignore', 'ignore', 'pipe'] });
  let stderr = '';
  child.stderr.on('data', (b: Buffer) => (stderr += b.toString('utf8')));
  const closed = new Promise<number | null>((resolve) => child.on('close', (code) => resolve(code)));
  for (let waited = 0; waited < 30_000; waited += 5) {
    if (existsSync(partial) && statSync(partial).size >= bytes) break;
    await sleep(5);
  }
  child.kill(signal);
  return { code: await closed, stderr };
}

t.test('a real SIGKILL or Ctrl-C mid-export, then --resume: the uninterrupted export', async (t) => {
  const dir = tempDir(t);
  const h = await filledGateway(t, dir);
  const full = Buffer.from((await raw(h.base, 'GET', `${ROWS_PATH}?limit=-1`)).body, 'utf8');
  const slow = await slowProxy(t, h.base);
  for (const [signal, at] of [
    ['SIGKILL', 0.3],
    ['SIGINT', 0.6],
  ] as const) {
    const out = join(dir, `${signal}.json`);
    const args = ['export', '--url', slow, ...TABLE, '--parallel', '2', '--out', out];
    const stopped = await interrupt(args, `${out}.partial`, Math.floor(full.length * at), signal);
    t.ok(existsSync(`${out}.partial`) && !existsSync(out), `${signal}: stopped with the partial file only`);
    t.ok(statSync(`${out}.partial`).size < full.length, `${signal}: stopped before the end`);
    if (signal === 'SIGINT') {
      t.equal(stopped.code, 130, 'Ctrl-C: exit 130');
      t.match(
        stopped.stderr,
        /interrupted \(SIGINT\)\nrowgate export: stopped after \d+ rows, kept in .*SIGINT\.json\.partial; continue with:\nrowgate export: {3}tools\/rowgate export --url .* --resume\n/,
        'says how to continue',
      );
    }
    const resumed = await runCli([...args.slice(0, 2), h.base, ...args.slice(3), '--resume']);
    t.equal(resumed.code, 0, resumed.stderr);
    t.match(resumed.stderr, /resumed after \d+ rows/);
    // The summary counts what this run wrote: its rows and bytes, the rest being the earlier run's.
    const m = /^exported (\d+) rows[^\n]*; wrote (\d+) bytes \(resumed after (\d+) rows already in [^\n]*\)\n$/m.exec(resumed.stderr);
    t.ok(m, resumed.stderr);
    t.equal(Number(m![1]) + Number(m![3]), full.toString('utf8').split('\r\n').length - 1, 'rows of this run and of the earlier one');
    t.ok(Number(m![2]) < full.length, 'the bytes of this run only');
    t.ok(readFileSync(out).equals(full), `${signal} at ${at * 100}%, resumed: the uninterrupted export, byte for byte`);
  }
});

t.test('an interrupted Avro export gives advice that works: its partial file is removed and the same command runs again', async (t) => {
  const dir = tempDir(t);
  const h = await filledGateway(t, dir);
  const slow = await slowProxy(t, h.base);
  const out = join(dir, 'rows.avro');
  const args = ['export', '--url', slow, ...TABLE, '--format', 'avro', '--out', out];
  const stopped = await interrupt(args, `${out}.partial`, 100_000, 'SIGINT');
  t.equal(stopped.code, 130, 'Ctrl-C: exit 130');
  t.notMatch(stopped.stderr, /--resume/, 'no advice to resume (an Avro file is not continued)');
  t.match(stopped.stderr, /an Avro export starts again from the first row; run again:\nrowgate export: {3}tools\/rowgate export --url .* --out .*rows\.avro\n/);
  t.notOk(existsSync(`${out}.partial`), 'the partial file, of no use, is removed');
  const again = await runCli([...args.slice(0, 2), h.base, ...args.slice(3)]);
  t.equal(again.code, 0, again.stderr);
  t.equal(readFileSync(out).subarray(0, 4).toString('latin1'), 'Obj\x01');

  // A partial file a killed Avro export left (no chance to remove it): the message says to delete it.
  const killed = join(dir, 'killed.avro');
  writeFileSync(`${killed}.partial`, 'Obj\x01 cut short');
  const refused = await runCli(['export', '--url', h.base, ...TABLE, '--out', killed]);
  t.equal(refused.code, 1);
  t.match(refused.stderr, /killed\.avro\.partial exists: an earlier export to .*killed\.avro was interrupted; an Avro file cannot be continued: delete it/);
  t.notMatch(refused.stderr, /--resume/);
});

t.test('--out naming a pipe or a directory: a pipe is written in place (never replaced by a file), --resume and a directory refused', async (t) => {
  const dir = tempDir(t);
  const h = await filledGateway(t, dir);
  const full = (await raw(h.base, 'GET', `${ROWS_PATH}?limit=-1`)).body;
  const fifo = join(dir, 'rows.fifo');
  const made = await new Promise<number | null>((resolve) => spawn('mkfifo', [fifo]).on('exit', resolve));
  t.equal(made, 0, 'mkfifo');
  // A reader of the pipe, as `rowgate export --out /dev/stdout | ...` or a named pipe's consumer.
  const reader = spawn('cat', [fifo], { stdio: ['ignore', 'pipe', 'inherit'] });
  const read: Buffer[] = [];
  reader.stdout.on('data', (b: Buffer) => read.push(b));
  const readerDone = new Promise((resolve) => reader.on('exit', resolve));
  const r = await runCli(['export', '--data', join(dir, 'data'), ...TABLE, '--out', fifo]);
  // An export that never opens the pipe leaves its reader waiting: 20 s, then it is stopped.
  const stop = setTimeout(() => reader.kill(), 20_000);
  await readerDone;
  clearTimeout(stop);
  t.equal(r.code, 0, r.stderr);
  t.equal(Buffer.concat(read).toString('utf8'), full, 'the reader got the whole export');
  t.ok(statSync(fifo).isFIFO(), 'the pipe is still a pipe, not a regular file');
  t.notOk(existsSync(`${fifo}.partial`), 'no partial file beside it');
  const resumed = await runCli(['export', '--data', join(dir, 'data'), ...TABLE, '--out', fifo, '--resume']);
  t.equal(resumed.code, 2);
  t.match(resumed.stderr, /--resume continues a regular file; .*rows\.fifo is a device or a pipe/);
  const intoDir = await runCli(['export', '--data', join(dir, 'data'), ...TABLE, '--out', dir]);
  t.equal(intoDir.code, 2);
  t.match(intoDir.stderr, /--out .* is a directory/);
});
