/**
 * Store durability under SIGKILL. Three writers, each killed three times at random moments into
 * one data directory (each run resumes after the last batch present); after every kill the
 * directory is reopened (a new CLI process exports it) and checked cell by cell:
 *
 * - a child writing one batch at a time through Store.write (fixtures/crash-writer.mjs), printing
 *   each batch id once its write resolved: every acknowledged batch is present and whole, no batch
 *   is half-written, and the batches present are 0 .. last;
 * - the same child with several Store.write calls outstanding (as concurrent POSTs; lmdb-js
 *   commits them together): every acknowledged batch whole, none partial, still 0 .. last;
 * - concurrent POSTs to `rowgate serve` (8 clients, one POST each outstanding), the server killed:
 *   every acknowledged POST is present whole after it restarts, and each POST's counter increment
 *   (in the same body) is counted exactly as often as its POSTs are present; beside them 4 clients
 *   POST one new row each request (the benchmark's single-row POST): every acknowledged one
 *   present whole;
 * - `rowgate import --batch 50` of a generated NDJSON file (prepared batches, two writes in flight),
 *   killed once this process sees a random number of its batches committed: the rows present are
 *   whole batches of 50 forming a prefix of the file.
 *
 * After every kill the stored entries are also checked for their form (rowForms): each row is
 * exactly one compact entry, or a spilled marker followed by its cell entries, never both and
 * never cells without a row entry (compact-row.ts).
 */
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { Agent, request } from 'node:http';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { open } from 'lmdb';
import t, { type Test } from 'tap';
import { USERS_LAYOUT_JSON } from '../../lib/model/layout/demo-layouts.js';
import { lmdbEnvOptions } from '../../lib/store/lmdb/env-options.js';
import { rowForms } from '../store/row-forms.js';
import { crashRow } from './fixtures/crash-rows.mjs';
import { CLI, ensureBuilt, ROOT, runCli, serveCli, tempDir, writeFile } from './helpers.js';

const WRITER = join(ROOT, 'test', 'cli', 'fixtures', 'crash-writer.mjs');

interface Run {
  readonly rowsPerBatch: number;
  /** Store.write calls outstanding at a time. */
  readonly concurrent: number;
  /** Acknowledgements to wait for before the kill timer starts. */
  readonly acks: number;
  /** Longest random delay after that, in ms. */
  readonly maxDelayMs: number;
}

type Cells = Record<string, Record<string, { timestamp: number; value: unknown }[]>>;
/** Rows read back: batch -> row index in the batch -> the row's cells as sorted lines. */
type Stored = Map<number, Map<number, string[]>>;

/** A row's cells as sorted "family:qualifier@timestamp=value" lines. */
function cellLines(cells: Cells): string[] {
  const out: string[] = [];
  for (const [family, qualifiers] of Object.entries(cells)) {
    for (const [qualifier, versions] of Object.entries(qualifiers)) {
      for (const v of versions) out.push(`${family}:${qualifier}@${v.timestamp}=${JSON.stringify(v.value)}`);
    }
  }
  return out.sort();
}

/** Reopens the directory (through the CLI, as a new process) and reads every row back. */
async function readBack(t: Test, dir: string): Promise<Stored> {
  const exported = await runCli(['export', '--data', dir, '--instance', 'crash', '--table', 'users']);
  t.equal(exported.code, 0, exported.stderr);
  const stored: Stored = new Map();
  for (const doc of exported.stdout.split('\r\n')) {
    if (doc === '') continue;
    const row = JSON.parse(doc) as { entityId: [number]; cells: Cells };
    const uid = row.entityId[0];
    const b = Math.floor(uid / 1000);
    let rows = stored.get(b);
    if (!rows) stored.set(b, (rows = new Map()));
    rows.set(uid % 1000, cellLines(row.cells));
  }
  return stored;
}

/** checkRowForms on the crash table, as a test assertion. */
async function checkForms(t: Test, dir: string, label: string): Promise<void> {
  const { rows, problems } = await rowForms(dir, 'data/crash/users');
  t.same(problems, [], `${label}: all ${rows} rows stored in exactly one form`);
}

/**
 * Checks that the batches present are 0 .. last and each is whole, cell by cell (batch b has
 * sizeOf(b) rows crashRow(b, i, sizeOf(b))); returns the last batch present (-1 for none).
 */
function checkWhole(t: Test, stored: Stored, sizeOf: (b: number) => number, label: string): number {
  const present = [...stored.keys()].sort((a, b) => a - b);
  const last = present[present.length - 1] ?? -1;
  t.same(
    present,
    Array.from({ length: last + 1 }, (_, i) => i),
    `${label}: batches present are 0 .. ${last}, none missing`,
  );
  let bad = 0;
  for (const b of present) {
    const n = sizeOf(b);
    const rows = stored.get(b)!;
    if (rows.size !== n) {
      bad++;
      t.fail(`batch ${b} has ${rows.size} of its ${n} rows`);
      continue;
    }
    for (let i = 0; i < n; i++) {
      const got = rows.get(i);
      const want = cellLines(crashRow(b, i, n).cells as Cells);
      if (got === undefined || got.join('\n') !== want.join('\n')) {
        bad++;
        t.same(got, want, `batch ${b} row ${i} complete`);
      }
    }
  }
  t.equal(bad, 0, `${label}: all ${present.length} batches present are whole`);
  return last;
}

/** Starts the writer, waits for `acks` acknowledgements and a random delay, kills it with SIGKILL. */
async function writeAndKill(dir: string, firstBatch: number, run: Run): Promise<{ acked: number[]; delay: number }> {
  const child = spawn(process.execPath, [WRITER, dir, String(firstBatch), String(run.rowsPerBatch), String(run.concurrent)], {
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const acked: number[] = [];
  let pending = '';
  let stderr = '';
  child.stderr.on('data', (b: Buffer) => (stderr += b.toString()));
  child.stdout.on('data', (b: Buffer) => {
    pending += b.toString();
    const lines = pending.split('\n');
    pending = lines.pop()!; // a line cut by the kill is not an acknowledgement
    for (const line of lines) {
      const m = /^ack (\d+)$/.exec(line);
      if (!m) throw new Error(`unexpected writer output ${JSON.stringify(line)}`);
      acked.push(Number(m[1]));
    }
  });
  const exited = once(child, 'exit');
  while (acked.length < run.acks) {
    if (child.exitCode !== null) throw new Error(`writer exited early (${child.exitCode}):\n${stderr}`);
    await sleep(5);
  }
  const delay = Math.floor(Math.random() * run.maxDelayMs);
  await sleep(delay);
  child.kill('SIGKILL');
  const [code, signal] = (await exited) as [number | null, string | null];
  if (signal !== 'SIGKILL') throw new Error(`writer ended with ${code}/${signal} instead of being killed:\n${stderr}`);
  // Acks still in the pipe were printed before the kill: they count.
  await sleep(20);
  return { acked, delay };
}

/** Kills the writer of `runs` in turn, checking the directory after each kill. */
async function killWriterRuns(t: Test, runs: readonly Run[]): Promise<void> {
  const dir = join(tempDir(t), 'data');
  /** Rows per batch of every batch submitted so far. */
  const batchSize = new Map<number, number>();
  let nextBatch = 0;
  let unacked = 0;
  for (const [index, run] of runs.entries()) {
    const label = `run ${index + 1}`;
    const { acked, delay } = await writeAndKill(dir, nextBatch, run);
    t.ok(
      acked.length >= run.acks,
      `${label}: ${acked.length} batches of ${run.rowsPerBatch} acknowledged (${run.concurrent} writes outstanding), killed ${delay} ms after ack ${run.acks}`,
    );
    const sorted = [...acked].sort((a, b) => a - b);
    t.same(
      sorted,
      Array.from({ length: acked.length }, (_, i) => nextBatch + i),
      `${label}: each batch acknowledged once, none skipped`,
    );
    if (run.concurrent === 1) t.same(acked, sorted, `${label}: acknowledged in order`);
    const lastAck = sorted[sorted.length - 1]!;
    // Up to `concurrent` batches after the last ack were submitted and may be committed unacknowledged.
    for (let b = nextBatch; b <= lastAck + run.concurrent; b++) batchSize.set(b, run.rowsPerBatch);

    const stored = await readBack(t, dir);
    await checkForms(t, dir, label);
    const missing = acked.filter((b) => !stored.has(b));
    t.same(missing, [], `${label}: every acknowledged batch is present`);
    const last = checkWhole(t, stored, (b) => batchSize.get(b) ?? 0, label);
    t.ok(
      last >= lastAck && last <= lastAck + run.concurrent,
      `${label}: last batch present (${last}) is between the last acknowledged (${lastAck}) and ${run.concurrent} after it`,
    );
    unacked += last - lastAck;
    nextBatch = last + 1;
  }
  // Not asserted (it depends on timing): how often a kill found batches committed whose ack never arrived.
  t.comment(`batches committed but not acknowledged before the kill, in all runs: ${unacked}`);
}

t.before(ensureBuilt);

t.test('one write at a time: every acknowledged batch survives SIGKILL, no batch is half-written', async (t) => {
  await killWriterRuns(t, [
    { rowsPerBatch: 1, concurrent: 1, acks: 25, maxDelayMs: 20 },
    { rowsPerBatch: 10, concurrent: 1, acks: 60, maxDelayMs: 50 },
    { rowsPerBatch: 10, concurrent: 1, acks: 150, maxDelayMs: 120 },
  ]);
});

t.test('concurrent writes (committed together by lmdb-js): every acknowledged batch survives SIGKILL whole, no batch is partial', async (t) => {
  await killWriterRuns(t, [
    { rowsPerBatch: 5, concurrent: 8, acks: 40, maxDelayMs: 40 },
    { rowsPerBatch: 2, concurrent: 16, acks: 120, maxDelayMs: 30 },
    { rowsPerBatch: 10, concurrent: 4, acks: 60, maxDelayMs: 80 },
  ]);
});

const IMPORT_BATCH = 50;
/** 80 batches of 50 rows of 27 cells: 4.8 MB of NDJSON. */
const FILE_BATCHES = 80;

/**
 * Runs `rowgate import --batch 50 FILE` on a generated file of the batches from `firstBatch` on,
 * and kills it with SIGKILL (after a random few ms) once `batches` of them are committed, as this
 * process sees by counting the table's cells in its own read of the environment: the import is
 * then mid-load, committing more, whatever the machine's speed.
 */
async function importAndKill(top: string, dir: string, firstBatch: number, batches: number): Promise<{ seen: number; delay: number }> {
  let text = '';
  for (let b = firstBatch; b < FILE_BATCHES; b++) for (let i = 0; i < IMPORT_BATCH; i++) text += `${JSON.stringify(crashRow(b, i, IMPORT_BATCH))}\n`;
  const file = writeFile(top, `from-${firstBatch}.ndjson`, text);
  const child = spawn(process.execPath, [CLI, 'import', '--data', dir, '--instance', 'crash', '--table', 'users', '--batch', String(IMPORT_BATCH), file], {
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  child.stdout.on('data', (b: Buffer) => (output += b.toString()));
  child.stderr.on('data', (b: Buffer) => (output += b.toString()));
  const exited = once(child, 'exit');
  const env = open(lmdbEnvOptions(dir));
  // One entry per row: these rows of 27 small cells are stored compact (compact-row.ts).
  const entries = env.openDB<Buffer, Buffer>({ name: 'data/crash/users', keyEncoding: 'binary', encoding: 'binary' });
  const target = (firstBatch + batches) * IMPORT_BATCH;
  let seen = 0;
  try {
    // Each read runs in a new event-loop turn, so lmdb-js reads a fresh snapshot.
    while ((seen = entries.getKeysCount()) < target) {
      if (child.exitCode !== null) throw new Error(`import exited (${child.exitCode}) before ${batches} batches were committed:\n${output}`);
      await sleep(5);
    }
  } finally {
    await env.close();
  }
  const delay = Math.floor(Math.random() * 30);
  await sleep(delay);
  child.kill('SIGKILL');
  const [code, signal] = (await exited) as [number | null, string | null];
  if (signal !== 'SIGKILL') throw new Error(`import ended with ${code}/${signal} instead of being killed:\n${output}`);
  return { seen: seen / IMPORT_BATCH, delay };
}

t.test('rowgate import --batch 50 killed mid-load: the rows present are whole batches forming a prefix of the file', async (t) => {
  const top = tempDir(t);
  const dir = join(top, 'data');
  const created = await runCli(['create-table', '--data', dir, '--instance', 'crash', '--layout', writeFile(top, 'users.json', USERS_LAYOUT_JSON)]);
  t.equal(created.code, 0, created.stderr);
  let nextBatch = 0;
  for (let run = 1; run <= 3; run++) {
    const label = `run ${run}`;
    // Each run imports the rest of the file, from the first batch not present (as docs/cli.md says to resume).
    const batches = 3 + Math.floor(Math.random() * 12);
    const { seen, delay } = await importAndKill(top, dir, nextBatch, batches);
    const stored = await readBack(t, dir);
    await checkForms(t, dir, label);
    const last = checkWhole(t, stored, () => IMPORT_BATCH, label);
    t.ok(
      last + 1 >= nextBatch + batches && last < FILE_BATCHES - 1,
      `${label}: killed mid-load ${delay} ms after ${seen} batches were seen committed; batches 0 .. ${last} of ${FILE_BATCHES} present (${last + 1 - nextBatch} from this run)`,
    );
    nextBatch = last + 1;
  }
});

const CLIENTS = 8;
const POST_ROWS = 5;
/** Client c's counter row: one increment of logins:hits in each of its POSTs. */
const COUNTER_UID = 900_000;
/** Clients POSTing one new row a request, row k at uid SINGLE_UID + k. */
const SINGLE_CLIENTS = 4;
const SINGLE_UID = 1_000_000;
/** Single row k: crashRow's cells (values, counters set, several versions) under its own uid. */
const singleRow = (k: number): ReturnType<typeof crashRow> => ({ ...crashRow(k, 0, 1), entityId: [SINGLE_UID + k] });

/** POSTs `body` to the users table; resolves with the status, 0 when the connection failed (the server was killed). */
function post(agent: Agent, port: number, body: string): Promise<number> {
  return new Promise((resolve) => {
    const req = request(
      { host: '127.0.0.1', port, agent, method: 'POST', path: '/v1/instances/crash/tables/users/rows', headers: { 'content-type': 'application/json' } },
      (res) => {
        res.resume();
        res.on('end', () => resolve(res.statusCode ?? 0));
        res.on('error', () => resolve(0));
      },
    );
    req.on('error', () => resolve(0));
    req.end(body);
  });
}

t.test('concurrent POSTs to rowgate serve killed with SIGKILL: every acknowledged POST survives whole after a restart, counters exact', async (t) => {
  const top = tempDir(t);
  const dir = join(top, 'data');
  const created = await runCli(['create-table', '--data', dir, '--instance', 'crash', '--layout', writeFile(top, 'users.json', USERS_LAYOUT_JSON)]);
  t.equal(created.code, 0, created.stderr);
  const cfg = writeFile(top, 'rowgate.yaml', 'admin: false\nlogLevel: warn\n');
  /** Client c posts batches c, c + CLIENTS, c + 2 * CLIENTS, ...; its next one per run continues there. */
  const next = Array.from({ length: CLIENTS }, (_, c) => c);
  const acked = new Set<number>();
  const nextSingle = Array.from({ length: SINGLE_CLIENTS }, (_, s) => s);
  const ackedSingles = new Set<number>();
  for (const [run, acks] of [30, 80, 150].entries()) {
    const label = `run ${run + 1}`;
    // A restart: each run serves the directory the last kill left.
    const served = await serveCli(t, ['--config', cfg, '--data', dir, '--port', '0'], { admin: false });
    const agent = new Agent({ keepAlive: true, maxSockets: CLIENTS });
    let ackedThisRun = 0;
    let stopped = false;
    const failures: number[] = [];
    const client = async (c: number): Promise<void> => {
      // Bounded: at most 2,000 POSTs a client a run.
      for (let i = 0; i < 2000 && !stopped; i++) {
        const b = next[c]!;
        const rows = Array.from({ length: POST_ROWS }, (_, r) => crashRow(b, r, POST_ROWS));
        const increment = { entityId: [COUNTER_UID + c], cells: { logins: { hits: [{ value: { incr: 1 } }] } } };
        const status = await post(agent, served.port, JSON.stringify([...rows, increment]));
        if (status === 0) return; // killed: this POST is unacknowledged
        if (status !== 200) failures.push(status);
        else {
          acked.add(b);
          ackedThisRun++;
        }
        next[c] = b + CLIENTS;
      }
    };
    let singlesThisRun = 0;
    const singleClient = async (s: number): Promise<void> => {
      // Bounded as the batch clients.
      for (let i = 0; i < 2000 && !stopped; i++) {
        const k = nextSingle[s]!;
        const status = await post(agent, served.port, JSON.stringify(singleRow(k)));
        if (status === 0) return;
        if (status !== 200) failures.push(status);
        else {
          ackedSingles.add(k);
          singlesThisRun++;
        }
        nextSingle[s] = k + SINGLE_CLIENTS;
      }
    };
    const clients = [...Array.from({ length: CLIENTS }, (_, c) => client(c)), ...Array.from({ length: SINGLE_CLIENTS }, (_, s) => singleClient(s))];
    for (let i = 0; i < 3000 && (ackedThisRun < acks || singlesThisRun < acks); i++) await sleep(10);
    t.ok(singlesThisRun >= acks, `${label}: ${singlesThisRun} single-row POSTs acknowledged before the kill`);
    t.ok(ackedThisRun >= acks, `${label}: ${ackedThisRun} POSTs acknowledged before the kill`);
    const delay = Math.floor(Math.random() * 40);
    await sleep(delay);
    served.child.kill('SIGKILL');
    await once(served.child, 'exit');
    await Promise.all(clients);
    stopped = true;
    agent.destroy();
    t.same(failures, [], `${label}: every answered POST was a 200`);

    // Read back by a new process: every acknowledged batch present and whole, no batch partial.
    const exported = await runCli(['export', '--data', dir, '--instance', 'crash', '--table', 'users']);
    t.equal(exported.code, 0, exported.stderr);
    const batches = new Map<number, Map<number, string[]>>();
    const counters = new Map<number, number>();
    const singles = new Map<number, string>();
    for (const doc of exported.stdout.split('\r\n')) {
      if (doc === '') continue;
      const row = JSON.parse(doc) as { entityId: [number]; cells: Cells };
      const uid = row.entityId[0];
      if (uid >= SINGLE_UID) {
        singles.set(uid - SINGLE_UID, cellLines(row.cells).join('\n'));
        continue;
      }
      if (uid >= COUNTER_UID) {
        counters.set(uid - COUNTER_UID, row.cells.logins!.hits![0]!.value as number);
        continue;
      }
      const b = Math.floor(uid / 1000);
      if (!batches.has(b)) batches.set(b, new Map());
      batches.get(b)!.set(uid % 1000, cellLines(row.cells));
    }
    await checkForms(t, dir, label);
    t.same(
      [...acked].filter((b) => !batches.has(b)),
      [],
      `${label}: all ${acked.size} acknowledged POSTs are present (${batches.size - acked.size} more committed, unacknowledged)`,
    );
    let torn = 0;
    for (const [b, rows] of batches) {
      for (let r = 0; r < POST_ROWS; r++) {
        const want = cellLines(crashRow(b, r, POST_ROWS).cells as Cells).join('\n');
        if (rows.get(r)?.join('\n') !== want) torn++;
      }
      if (rows.size !== POST_ROWS) torn++;
    }
    t.equal(torn, 0, `${label}: every batch present is whole, cell by cell`);
    t.same(
      [...ackedSingles].filter((k) => !singles.has(k)),
      [],
      `${label}: all ${ackedSingles.size} acknowledged single-row POSTs are present (${singles.size - ackedSingles.size} more committed, unacknowledged)`,
    );
    t.same(
      [...singles].filter(([k, lines]) => lines !== cellLines(singleRow(k).cells as Cells).join('\n')).map(([k]) => k),
      [],
      `${label}: every single row present is whole, cell by cell`,
    );
    // The next run's single rows continue after the highest present of each client.
    for (let s = 0; s < SINGLE_CLIENTS; s++) {
      const mine = [...singles.keys()].filter((k) => k % SINGLE_CLIENTS === s);
      nextSingle[s] = Math.max(nextSingle[s]!, mine.length === 0 ? s : Math.max(...mine) + SINGLE_CLIENTS);
    }
    for (let c = 0; c < CLIENTS; c++) {
      // A client's batches present are its first ones, with no gap, and its counter counts exactly them.
      const mine = [...batches.keys()].filter((b) => b % CLIENTS === c).sort((x, y) => x - y);
      t.same(
        mine,
        Array.from({ length: mine.length }, (_, i) => c + i * CLIENTS),
        `${label}: client ${c}'s batches present have no gap`,
      );
      t.equal(counters.get(c) ?? 0, mine.length, `${label}: client ${c}'s counter (${counters.get(c) ?? 0}) counts its ${mine.length} POSTs present`);
      // The next run continues after the last batch present (a committed, unacknowledged one included).
      next[c] = c + mine.length * CLIENTS;
    }
  }
});
