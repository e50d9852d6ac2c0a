/**
 * LogSink (lib/logging/log-sink.ts): request lines gathered and written in large pieces within 50 ms,
 * pino's lines written at once and in order with them, everything written at process.exit(), and
 * a reader that does not keep up (a full non-blocking pipe) neither loses lines nor blocks, up to
 * the pending limit, past which request lines are dropped and counted in a warning line.
 */
import { spawn } from 'node:child_process';
import { closeSync, mkdtempSync, openSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import t from 'tap';
import { LogSink, wholeLines } from '../../lib/logging/log-sink.js';

const dir = mkdtempSync(join(tmpdir(), 'rowgate-log-sink-'));
t.teardown(() => rmSync(dir, { recursive: true, force: true }));

const line = (i: number): string => `{"level":30,"n":${i},"msg":"request"}\n`;
const numbers = (text: string): number[] =>
  text
    .split('\n')
    .filter((l) => l !== '')
    .map((l) => (JSON.parse(l) as { n: number }).n);

async function until(check: () => boolean, ms: number): Promise<boolean> {
  const deadline = Date.now() + ms;
  while (!check() && Date.now() < deadline) await new Promise((r) => setTimeout(r, 5));
  return check();
}

t.test('request lines wait to be written together, within 50 ms; a pino line is written at once, after them', async (t) => {
  const file = join(dir, 'a.log');
  const fd = openSync(file, 'w');
  t.teardown(() => closeSync(fd));
  const sink = new LogSink(fd);
  for (let i = 0; i < 3; i++) sink.writeLater(line(i));
  t.equal(readFileSync(file, 'utf8'), '', 'nothing written at once');
  t.ok(await until(() => numbers(readFileSync(file, 'utf8')).length === 3, 1000), 'written within the flush delay');
  sink.writeLater(line(3));
  sink.write(line(4));
  t.same(numbers(readFileSync(file, 'utf8')), [0, 1, 2, 3, 4], "pino's line written synchronously, after the request line before it");
});

t.test('request lines are written without waiting once 1 MiB gathered for a file, 64 KiB for a pipe', async (t) => {
  const gather = (sink: LogSink, bytes: number): number => {
    let i = 0;
    for (let written = 0; written < bytes; written += line(i++).length) sink.writeLater(line(i));
    return i;
  };
  const file = join(dir, 'b.log');
  const fd = openSync(file, 'w');
  t.teardown(() => closeSync(fd));
  const sink = new LogSink(fd);
  const under = gather(sink, 1024 * 1024 - 100);
  t.equal(readFileSync(file, 'utf8'), '', 'below 1 MiB a file gets nothing yet');
  for (let i = under; i < under + 10; i++) sink.writeLater(line(i));
  const seen = numbers(readFileSync(file, 'utf8'));
  t.ok(seen.length > under, `past 1 MiB the lines gathered are written synchronously (${seen.length} lines)`);
  t.same(
    seen,
    Array.from({ length: seen.length }, (_, k) => k),
    'in order',
  );

  const piped = join(dir, 'b-pipe.log');
  const reader = slowReader(piped, 0);
  const toPipe = new LogSink(reader.fd);
  // Past 64 KiB the lines are written at once: the pipe is closed right after, before any timer could flush them.
  const count = gather(toPipe, 64 * 1024);
  reader.end();
  await reader.done;
  const seenInPipe = numbers(readFileSync(piped, 'utf8'));
  t.ok(seenInPipe.length > 0, `the pipe got the first 64 KiB at once (${seenInPipe.length} of ${count} lines)`);
  t.same(
    seenInPipe,
    Array.from({ length: seenInPipe.length }, (_, k) => k),
    'in order',
  );
});

t.test('lines of any UTF-8 and any length come out byte for byte, in order (the buffer grows for a long line)', async (t) => {
  const file = join(dir, 'utf8.log');
  const fd = openSync(file, 'w');
  t.teardown(() => closeSync(fd));
  const sink = new LogSink(fd);
  const lines: string[] = [];
  const say = (text: string, later: boolean): void => {
    const l = `${JSON.stringify({ msg: text })}\n`;
    lines.push(l);
    if (later) sink.writeLater(l);
    else sink.write(l);
  };
  // Two- and three-byte characters and a surrogate pair, a line far over the 64 KiB flush size, and
  // enough short lines to cross the flush size with a multi-byte line.
  say('caf\u00e9 \u20ac \ud83d\ude00', true);
  say('\u00e9'.repeat(100_000), false);
  for (let i = 0; i < 2000; i++) say(`\u20ac line ${i} \ud83d\ude00`, true);
  say('x'.repeat(300_000), true);
  t.ok(sink.flush(), 'everything written');
  t.equal(readFileSync(file, 'utf8'), lines.join(''), 'the same text, in order');
});

t.test('process.exit() right after request lines: every line is in the log', async (t) => {
  const file = join(dir, 'c.log');
  const script = join(dir, 'exit-child.mjs');
  const sinkModule = new URL('../../lib/logging/log-sink.js', import.meta.url).href;
  writeFileSync(
    script,
    `import { openSync } from 'node:fs';\nimport { LogSink } from ${JSON.stringify(sinkModule)};\n` +
      `const sink = new LogSink(openSync(${JSON.stringify(file)}, 'w'));\n` +
      `for (let i = 0; i < 1000; i++) sink.writeLater(${JSON.stringify('{"level":30,"n":')} + i + '}\\n');\nprocess.exit(3);\n`,
  );
  // The script is JavaScript importing the compiled sink: the child needs no loader.
  const child = spawn(process.execPath, [script], { stdio: ['ignore', 'ignore', 'pipe'] });
  let err = '';
  child.stderr.on('data', (d: Buffer) => (err += d.toString()));
  const code = await new Promise<number | null>((resolve) => child.on('exit', resolve));
  t.equal(code, 3, err);
  t.same(
    numbers(readFileSync(file, 'utf8')),
    Array.from({ length: 1000 }, (_, k) => k),
    'all 1,000 lines written at exit',
  );
});

/** A non-blocking pipe to a reader that starts reading after `delayMs`, into `file`. */
function slowReader(file: string, delayMs: number) {
  const child = spawn('sh', ['-c', `sleep ${delayMs / 1000}; cat > '${file}'`], { stdio: ['pipe', 'ignore', 'inherit'] });
  const fd = (child.stdin as unknown as { _handle: { fd: number } })._handle.fd;
  const done = new Promise<void>((resolve) => child.on('exit', () => resolve()));
  return { fd, end: () => child.stdin.end(), done };
}

t.test('a full pipe: lines wait (nothing thrown, nothing blocks) and all arrive in order once the reader reads', async (t) => {
  const file = join(dir, 'd.log');
  const reader = slowReader(file, 500);
  const sink = new LogSink(reader.fd);
  const started = Date.now();
  // About 1 MB: far beyond a pipe's 64 KiB buffer.
  for (let i = 0; i < 30_000; i++) sink.writeLater(line(i));
  sink.write(line(30_000));
  t.ok(Date.now() - started < 400, 'writing did not wait for the reader');
  t.ok(await until(() => sink.flush(), 5000), 'everything handed over once the reader reads');
  reader.end();
  await reader.done;
  t.same(
    numbers(readFileSync(file, 'utf8')),
    Array.from({ length: 30_001 }, (_, k) => k),
    'every line, in order',
  );
});

t.test('past the pending limit request lines are dropped, counted in a warning line; pino lines are kept', async (t) => {
  const file = join(dir, 'e.log');
  const reader = slowReader(file, 300);
  const sink = new LogSink(reader.fd, { base: ',"service":"rowgate"', maxPendingBytes: 256 * 1024 });
  const total = 30_000;
  for (let i = 0; i < total; i++) sink.writeLater(line(i));
  sink.write(line(total));
  t.ok(await until(() => sink.flush(), 5000), 'everything kept handed over once the reader reads');
  reader.end();
  await reader.done;
  const lines = readFileSync(file, 'utf8')
    .split('\n')
    .filter((l) => l !== '')
    .map((l) => JSON.parse(l) as { n?: number; dropped?: number; service?: string; level: number });
  const kept = lines.filter((l) => l.n !== undefined).map((l) => l.n!);
  const notice = lines.filter((l) => l.dropped !== undefined);
  t.equal(notice.length, 1, 'one warning line');
  t.match(notice[0], { level: 40, service: 'rowgate' });
  t.ok(kept.includes(total), "pino's line was kept");
  t.equal(kept.length - 1 + notice[0]!.dropped!, total, 'every request line is either in the log or counted as dropped');
  t.same(
    kept.slice(0, 100),
    Array.from({ length: 100 }, (_, k) => k),
    'the first lines kept, in order',
  );
});

t.test('shared (--workers): two processes writing to one pipe never split a line', async (t) => {
  const file = join(dir, 'f.log');
  // The reader starts late, so both writers meet a full pipe.
  const reader = spawn('sh', ['-c', `sleep 0.5; cat > '${file}'`], { stdio: ['pipe', 'ignore', 'inherit'] });
  const readerDone = new Promise<void>((resolve) => reader.on('exit', () => resolve()));
  const script = join(dir, 'shared-child.mjs');
  const sinkModule = new URL('../../lib/logging/log-sink.js', import.meta.url).href;
  // Lines of ~300 bytes, written in 64 KiB gatherings: without line-aligned writes of at most
  // PIPE_BUF, the two writers' bytes interleave mid-line once the pipe is full.
  writeFileSync(
    script,
    `import { LogSink } from ${JSON.stringify(sinkModule)};\n` +
      `const sink = new LogSink(1, { shared: process.argv[2] === 'shared' });\n` +
      `const pad = 'x'.repeat(250);\n` +
      `for (let i = 0; i < 40000; i++) sink.writeLater('{"w":' + process.argv[3] + ',"n":' + i + ',"pad":"' + pad + '"}\\n');\n` +
      `while (!sink.flush()) await new Promise((r) => setTimeout(r, 5));\n`,
  );
  const writers = ['1', '2'].map((w) => spawn(process.execPath, [script, 'shared', w], { stdio: ['ignore', reader.stdin, 'inherit'] }));
  await Promise.all(writers.map((w) => new Promise((resolve) => w.on('exit', resolve))));
  reader.stdin.end();
  await readerDone;
  const lines = readFileSync(file, 'utf8')
    .split('\n')
    .filter((l) => l !== '');
  let broken = 0;
  const seen = { 1: 0, 2: 0 } as Record<string, number>;
  for (const l of lines) {
    try {
      const o = JSON.parse(l) as { w: number; n: number };
      if (o.n !== seen[o.w]) broken++;
      seen[o.w] = o.n + 1;
    } catch {
      broken++;
    }
  }
  t.equal(broken, 0, 'every line whole, each writer in order');
  t.same(seen, { 1: 40000, 2: 40000 }, 'every line of both writers');
});

t.test('shared writes are whole lines of at most PIPE_BUF (4096) bytes; a longer line goes alone', async (t) => {
  const lines = (...lengths: number[]) => Buffer.from(lengths.map((n) => 'x'.repeat(n - 1) + '\n').join(''));
  t.equal(wholeLines(lines(100, 200)), 300, 'all of it when it fits');
  t.equal(wholeLines(lines(4096)), 4096, 'one line of exactly PIPE_BUF');
  t.equal(wholeLines(lines(2000, 2000, 2000)), 4000, 'the lines that fit, not a byte of the third');
  t.equal(wholeLines(lines(4000, 96, 1)), 4096, 'up to PIPE_BUF exactly');
  t.equal(wholeLines(lines(4097, 10)), 4097, 'a line longer than PIPE_BUF alone (nothing can keep it whole)');
  t.equal(wholeLines(Buffer.from('y'.repeat(5000))), 5000, 'no line end at all: everything');
});
