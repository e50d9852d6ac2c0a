/**
 * writeInOrder (tools/support/ordered-ranges.ts): ranges read N at a time come out in order, and
 * when one range fails, what was written is still a prefix of the whole in key order (no range
 * after a gap), so --resume can continue it.
 */
import { mkdtempSync, rmSync, createWriteStream, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import t from 'tap';
import type { ChunkSource } from '../../lib/rows/row-stream.js';
import { writeInOrder } from '../../tools/support/ordered-ranges.js';
import { Output } from '../../tools/support/output.js';

/** Range r: rows "r-0" .. "r-9" in chunks of two, each after `delay(r, i)` ms; failing at row `failAt` when given. */
function range(r: number, delay: (r: number, i: number) => number, failAt?: number): () => ChunkSource {
  return () => {
    let i = 0;
    return {
      next: async () => {
        if (i >= 10) return undefined;
        await sleep(delay(r, i));
        if (failAt !== undefined && i >= failAt) throw new Error(`range ${r} failed`);
        const text = `${r}-${i}\r\n${r}-${i + 1}\r\n`;
        i += 2;
        return { bytes: Buffer.from(text), rows: 2, cells: 0 };
      },
      close: async () => undefined,
    };
  };
}

const whole = (n: number): string => Array.from({ length: n }, (_, r) => Array.from({ length: 10 }, (_, i) => `${r}-${i}\r\n`).join('')).join('');

t.test('ranges are written in order whatever order they finish in; a failure leaves a prefix', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'rowgate-ordered-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  // Later ranges finish first (shorter delays), so most are spooled.
  for (const parallel of [1, 2, 3, 8]) {
    const file = join(dir, `ok-${parallel}`);
    const out = new Output(createWriteStream(file));
    const sources = Array.from({ length: 7 }, (_, r) => range(r, (r2) => 7 - r2));
    let asked = 0;
    const result = await writeInOrder(sources, out, {
      parallel,
      spoolDir: () => {
        asked++;
        return dir;
      },
    });
    await out.end();
    t.equal(readFileSync(file, 'utf8'), whole(7), `--parallel ${parallel}: in order`);
    t.equal(result.rows, 70);
    // The spool folder is asked for only when a range is read ahead of its turn: never with one at a time.
    if (parallel === 1) t.equal(asked, 0, '--parallel 1: no spool folder asked for');
    else t.ok(asked > 0, `--parallel ${parallel}: ranges were spooled`);
  }
  for (const failing of [0, 1, 4]) {
    const file = join(dir, `fail-${failing}`);
    const out = new Output(createWriteStream(file));
    const sources = Array.from({ length: 7 }, (_, r) => range(r, (r2, i) => (r2 === failing ? 3 : 1 + i), r === failing ? 4 : undefined));
    await t.rejects(writeInOrder(sources, out, { parallel: 3, spoolDir: () => dir }), { message: `range ${failing} failed` });
    await out.end();
    const text = readFileSync(file, 'utf8');
    t.ok(whole(7).startsWith(text), `range ${failing} failing: the output (${text.split('\r\n').length - 1} rows) is a prefix of the whole`);
  }
  // A slow range still reading when a later one fails, with the range between them complete: the
  // slow range must not be cut short and the complete one appended after the gap.
  const file = join(dir, 'gap');
  const out = new Output(createWriteStream(file));
  const sources = Array.from({ length: 5 }, (_, r) => range(r, (r2) => (r2 === 1 ? 20 : 1), r === 3 ? 4 : undefined));
  await t.rejects(writeInOrder(sources, out, { parallel: 3, spoolDir: () => dir }), { message: 'range 3 failed' });
  await out.end();
  const text = readFileSync(file, 'utf8');
  t.ok(whole(5).startsWith(text), `a slow range before the failed one: the output (${text.split('\r\n').length - 1} rows) is still a prefix`);
});
