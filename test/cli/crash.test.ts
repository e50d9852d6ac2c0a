/**
 * Store durability under SIGKILL: a child writes batches (fixtures/crash-writer.mjs) and prints
 * each batch id once Store.write resolved; it is killed at a random moment, the directory is
 * reopened, and every acknowledged batch must be present and complete, no batch half-written.
 * Three kills into the same directory (each run resumes after the last batch present), with
 * different batch sizes and kill delays.
 */
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import t from 'tap';
import { crashRow } from './fixtures/crash-rows.mjs';
import { ensureBuilt, ROOT, runCli, tempDir } from './helpers.js';

const WRITER = join(ROOT, 'test', 'cli', 'fixtures', 'crash-writer.mjs');

interface Run {
  readonly rowsPerBatch: number;
  /** Acknowledgements to wait for before the kill timer starts. */
  readonly acks: number;
  /** Longest random delay after that, in ms. */
  readonly maxDelayMs: number;
}

const RUNS: Run[] = [
  { rowsPerBatch: 1, acks: 25, maxDelayMs: 20 },
  { rowsPerBatch: 10, acks: 60, maxDelayMs: 50 },
  { rowsPerBatch: 10, acks: 150, maxDelayMs: 120 },
];

/** A row's cells as sorted "family:qualifier@timestamp=value" lines. */
function cellLines(cells: Record<string, Record<string, { timestamp: number; value: unknown }[]>>): string[] {
  const out: string[] = [];
  for (const [family, qualifiers] of Object.entries(cells)) {
    for (const [qualifier, versions] of Object.entries(qualifiers)) {
      for (const v of versions) out.push(`${family}:${qualifier}@${v.timestamp}=${JSON.stringify(v.value)}`);
    }
  }
  return out.sort();
}

/** Starts the writer, waits for `acks` acknowledgements and a random delay, kills it with SIGKILL. */
async function writeAndKill(dir: string, firstBatch: number, run: Run): Promise<{ acked: number[]; delay: number }> {
  const child = spawn(process.execPath, [WRITER, dir, String(firstBatch), String(run.rowsPerBatch)], { stdio: ['ignore', 'pipe', 'pipe'] });
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

t.before(ensureBuilt);

t.test('every acknowledged batch survives SIGKILL, no batch is half-written', async (t) => {
  const dir = join(tempDir(t), 'data');
  /** Rows per batch of every batch written so far. */
  const batchSize = new Map<number, number>();
  let nextBatch = 0;

  for (const [index, run] of RUNS.entries()) {
    const { acked, delay } = await writeAndKill(dir, nextBatch, run);
    t.ok(acked.length >= run.acks, `run ${index + 1}: ${acked.length} batches of ${run.rowsPerBatch} acknowledged, killed ${delay} ms after ack ${run.acks}`);
    t.same(acked, Array.from({ length: acked.length }, (_, i) => nextBatch + i), 'acknowledged in order');
    const lastAck = acked[acked.length - 1]!;
    // The batch after the last ack may have been committed without its ack reaching us.
    for (let b = nextBatch; b <= lastAck + 1; b++) batchSize.set(b, run.rowsPerBatch);

    // Reopen the directory (through the CLI, as a new process) and read everything back.
    const exported = await runCli(['export', '--data', dir, '--instance', 'crash', '--table', 'users']);
    t.equal(exported.code, 0, exported.stderr);
    const rowsByBatch = new Map<number, Map<number, string[]>>();
    for (const doc of exported.stdout.split('\r\n')) {
      if (doc === '') continue;
      const row = JSON.parse(doc) as { entityId: [number]; cells: Record<string, Record<string, { timestamp: number; value: unknown }[]>> };
      const uid = row.entityId[0];
      const b = Math.floor(uid / 1000);
      let rows = rowsByBatch.get(b);
      if (!rows) rowsByBatch.set(b, (rows = new Map()));
      rows.set(uid % 1000, cellLines(row.cells));
    }

    const present = [...rowsByBatch.keys()].sort((a, b) => a - b);
    const last = present[present.length - 1] ?? -1;
    t.ok(last === lastAck || last === lastAck + 1, `last batch present (${last}) is the last acknowledged (${lastAck}) or the one after`);
    t.same(present, Array.from({ length: last + 1 }, (_, i) => i), 'batches present: 0 .. last, none missing');

    let bad = 0;
    for (const b of present) {
      const n = batchSize.get(b)!;
      const rows = rowsByBatch.get(b)!;
      if (rows.size !== n) {
        bad++;
        t.fail(`batch ${b} has ${rows.size} of its ${n} rows`);
        continue;
      }
      for (let i = 0; i < n; i++) {
        const got = rows.get(i);
        const want = cellLines(crashRow(b, i, n).cells);
        if (got === undefined || got.join('\n') !== want.join('\n')) {
          bad++;
          t.same(got, want, `batch ${b} row ${i} complete`);
        }
      }
    }
    t.equal(bad, 0, `run ${index + 1}: all ${present.length} batches present are complete`);
    nextBatch = last + 1;
  }
});
