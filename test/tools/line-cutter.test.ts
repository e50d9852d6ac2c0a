/**
 * tools/support/line-cutter.ts cuts `rowgate import`'s input into parts of lines: every line comes
 * out whole, without its LF or the CR before it, with its input line number; blank lines and the
 * first line's byte order mark are skipped. Re-run at every chunk size from 1 byte to the whole
 * input and with parts taken at several sizes, as the input's chunks fall anywhere.
 */
import t from 'tap';
import { LineCutter, type LinesPart } from '../../tools/support/line-cutter.js';

const BOM = '\ufeff';
const INPUT = `${BOM}{"a":1}\r\n\n  \r\n{"b":"two words"}\n\t\n{"c":"é ü"}\r\r\n${'x'.repeat(3000)}\n\r\n{"last":"no LF"}`;

/** What the cutter must give: [line number, text] of each non-blank line. */
function expected(input: string): [number, string][] {
  const out: [number, string][] = [];
  input.split('\n').forEach((raw, i) => {
    let line = i === 0 && raw.startsWith(BOM) ? raw.slice(1) : raw;
    if (line.endsWith('\r')) line = line.slice(0, -1);
    if (!/^[ \t\r]*$/.test(line)) out.push([i + 1, line]);
  });
  return out;
}

function linesOf(part: LinesPart): [number, string][] {
  return Array.from(part.lines, (n, i) => [n, Buffer.from(part.bytes.subarray(part.starts[i], part.ends[i])).toString('utf8')]);
}

t.test('every chunk size and part size gives the same lines, numbered, without CR LF, blank lines or BOM', async (t) => {
  const bytes = Buffer.from(INPUT, 'utf8');
  const want = expected(INPUT);
  t.equal(want.length, 5, 'the input has 5 non-blank lines');
  t.equal(want[2]![1], '{"c":"é ü"}\r', 'only one CR before the LF is cut');
  let runs = 0;
  for (let chunk = 1; chunk <= bytes.length; chunk += chunk < 40 ? 1 : 97) {
    for (const partSize of [1, 2, 5]) {
      const cutter = new LineCutter();
      const got: [number, string][] = [];
      for (let at = 0; at < bytes.length; at += chunk) {
        cutter.push(bytes.subarray(at, at + chunk));
        while (cutter.held >= partSize) got.push(...linesOf(cutter.take(partSize)));
      }
      cutter.end();
      if (cutter.held > 0) got.push(...linesOf(cutter.take(cutter.held)));
      t.same(got, want, `chunks of ${chunk} bytes, parts of ${partSize} lines`);
      runs++;
    }
  }
  t.ok(runs > 100);
});

t.test('a part is a buffer of its own: later input does not change it', async (t) => {
  const cutter = new LineCutter();
  cutter.push(Buffer.from('{"a":1}\n{"b":2}\n{"c"'));
  const first = cutter.take(1);
  cutter.push(Buffer.from(':3}\n'.repeat(1) + 'z'.repeat(4 * 1024 * 1024) + '\n'));
  t.same(linesOf(first), [[1, '{"a":1}']]);
  t.same(
    linesOf(cutter.take(2)).map(([n, s]) => [n, s.slice(0, 10)]),
    [
      [2, '{"b":2}'],
      [3, '{"c":3}'],
    ],
  );
  t.equal(first.bytes.buffer.byteLength, first.bytes.byteLength, 'transferable: the part owns its whole ArrayBuffer');
});

t.test('lines before skipBefore are counted, not held, and their bytes are not kept', async (t) => {
  const bytes = Buffer.from(INPUT, 'utf8');
  const want = expected(INPUT);
  for (const from of [1, 2, 4, 6, 9, 10, 11]) {
    for (const chunk of [1, 7, bytes.length]) {
      const cutter = new LineCutter(from);
      for (let at = 0; at < bytes.length; at += chunk) cutter.push(bytes.subarray(at, at + chunk));
      cutter.end();
      const got = cutter.held > 0 ? linesOf(cutter.take(cutter.held)) : [];
      t.same(
        got,
        want.filter(([n]) => n >= from),
        `from line ${from}, chunks of ${chunk} bytes`,
      );
    }
  }
  // 64 MiB of lines skipped in 64 KiB chunks: the buffer stays at its first size.
  const cutter = new LineCutter(1_000_000_000);
  const chunk = Buffer.from(`${'{"a":1}'.padEnd(63, ' ')}\n`.repeat(1024));
  for (let i = 0; i < 1024; i++) cutter.push(chunk);
  t.equal(cutter.held, 0);
  t.ok((cutter as unknown as { buf: Buffer }).buf.length <= 1024 * 1024, 'no skipped line kept');
});
