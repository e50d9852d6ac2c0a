/** countDocumentCells (tools/support/document-cells.ts) counts what JSON.parse finds, whatever the values' text holds. */
import t from 'tap';
import { countDocumentCells } from '../../tools/support/document-cells.js';

function parsedCells(text: string): number {
  let n = 0;
  for (const line of text.split('\r\n').filter((l) => l !== '')) {
    const doc = JSON.parse(line) as { cells: Record<string, Record<string, unknown[]>> };
    for (const family of Object.values(doc.cells)) for (const versions of Object.values(family)) n += versions.length;
  }
  return n;
}

const cell = (value: unknown, ts = 5): string => JSON.stringify({ timestamp: ts, value, writer_schema: 0 });

t.test('cells are counted as JSON.parse finds them, with brackets, quotes and escapes in names and values', async (t) => {
  const docs = [
    `{"entityId":[1,"a]}{["],"cells":{"f":{"q":[${cell('x')},${cell('[{"timestamp":1}]', 4)}]},"g{":{"q]\\"":[${cell({ timestamp: 1, nested: [{ a: [] }] })}]}}}`,
    `{"entityId":"['shell', \\"id\\"]","cells":{"f":{"a":[${cell([{ timestamp: 2 }, [[{}]]])}],"b":[${cell('\\\\')},${cell('"}')},${cell(null)}]}}}`,
    `{"entityId":[2],"cells":{}}`,
    `{"entityId":[3],"cells":{"m":{"":[${cell('{')}]}}}`,
  ];
  const text = docs.map((d) => `${d}\r\n`).join('');
  t.equal(parsedCells(text), 8);
  t.equal(countDocumentCells(Buffer.from(text)), 8);
  for (const d of docs) t.equal(countDocumentCells(Buffer.from(`${d}\r\n`)), parsedCells(`${d}\r\n`), d);
});
