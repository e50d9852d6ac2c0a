/**
 * plain-line.ts writes an import line's compact row straight from its bytes. Every line it takes
 * must come out byte for byte as the general path packs it (parseExactJson, encodeRowInput,
 * BatchPacker.add), and every line it is not sure of (bad lines included) must be left to the
 * general path. Checked over thousands of generated lines of every column kind and form, and
 * hand-written lines at each edge the general path treats differently.
 */
import t, { type Test } from 'tap';
import { isRowgateError } from '../../lib/errors.js';
import { parseExactJson } from '../../lib/model/json/exact-json.js';
import { parseLayout } from '../../lib/model/layout/layout.js';
import { encodeRowInput } from '../../lib/model/cells/row-input.js';
import type { SchemaTable, TableLayout } from '../../lib/model/types.js';
import { decodeUtf8 } from '../../lib/model/json/utf8-pieces.js';
import { PlainLineEncoder } from '../../lib/store/lmdb/plain-line.js';
import { BatchPacker } from '../../lib/store/lmdb/prepared-batch.js';
import { openStoreWithTable } from './lmdb-fixtures.js';

const NOW = 1_700_000_000_123;
const DAY = 86_400;

const LAYOUT = {
  name: 'plain',
  keys_format: {
    encoding: 'FORMATTED',
    salt: { hash_size: 2 },
    components: [
      { name: 'who', type: 'STRING' },
      { name: 'n', type: 'LONG' },
    ],
  },
  locality_groups: [
    {
      name: 'default',
      in_memory: false,
      max_versions: 3,
      ttl_seconds: 2147483647,
      compression_type: 'NONE',
      families: [
        {
          name: 'd',
          columns: [
            { name: 's', column_schema: { storage: 'UID', type: 'INLINE', value: '"string"' } },
            { name: 'l', column_schema: { storage: 'UID', type: 'INLINE', value: '"long"' } },
            { name: 'i', column_schema: { storage: 'UID', type: 'INLINE', value: '"int"' } },
            { name: 'x', column_schema: { storage: 'UID', type: 'INLINE', value: '"double"' } },
            { name: 'b', column_schema: { storage: 'UID', type: 'INLINE', value: '"boolean"' } },
            { name: 'f', column_schema: { storage: 'UID', type: 'INLINE', value: '"float"' } },
            { name: 'u', column_schema: { storage: 'UID', type: 'INLINE', value: '["null","string"]' } },
            { name: 'c', column_schema: { type: 'COUNTER', storage: 'FINAL' } },
          ],
        },
        { name: 'm', map_schema: { storage: 'UID', type: 'INLINE', value: '"string"' } },
        { name: 'a', columns: [{ name: 'z', column_schema: { storage: 'UID', type: 'INLINE', value: '"long"' } }] },
      ],
    },
    {
      name: 'short',
      in_memory: false,
      max_versions: 1,
      ttl_seconds: DAY,
      compression_type: 'NONE',
      families: [{ name: 't', columns: [{ name: 'v', column_schema: { storage: 'UID', type: 'INLINE', value: '"string"' } }] }],
    },
  ],
  version: 'layout-1.3.0',
};

interface Setup {
  readonly layout: TableLayout;
  readonly schemas: SchemaTable;
}

async function setup(t: Test): Promise<Setup> {
  const { store } = await openStoreWithTable(t, parseLayout(LAYOUT), { scanThreads: 0 });
  return { layout: await store.getLayout('i', 'plain'), schemas: await store.schemaTable('i') };
}

/** The general path's packed bytes of the line, or the code of its error. */
async function generalPath(line: Buffer, s: Setup): Promise<{ bytes?: Buffer; error?: string }> {
  try {
    const item = parseExactJson(decodeUtf8(line, 'the row'), 'the row');
    const { row } = await encodeRowInput(item, { layout: s.layout, schemas: s.schemas });
    const packer = new BatchPacker(s.layout, Infinity);
    if (!packer.add(row, NOW)) return { error: 'unpackable' };
    return { bytes: Buffer.from(packer.finish().bytes) };
  } catch (e) {
    if (isRowgateError(e)) return { error: e.code };
    throw e;
  }
}

/** The plain path's packed bytes of the line (the line sits inside a larger buffer), or undefined when it left the line. */
function plainPath(line: Buffer, encoder: PlainLineEncoder, s: Setup): Buffer | undefined {
  const framed = Buffer.concat([Buffer.from('xx\n'), line, Buffer.from('\nyy')]);
  const packer = new BatchPacker(s.layout, Infinity, 64);
  const cells = encoder.add(framed, 3, 3 + line.length, NOW, packer);
  if (cells === 0) return undefined;
  return Buffer.from(packer.finish().bytes);
}

let seed = 7;
const random = (): number => (seed = (seed * 1103515245 + 12345) % 2147483648) / 2147483648;
const pick = <T>(items: readonly T[]): T => items[Math.floor(random() * items.length)]!;
const ws = (): string => pick(['', '', '', ' ', '\t', ' \r\n ']);

/** A value of each plain kind, in canonical form (the plain path takes them) or not (it leaves them). */
const PLAIN_VALUES: Record<string, readonly string[]> = {
  s: ['"user-1"', '""', '"a/b <c> \'d\' ~"', '"x y"'],
  l: ['0', '7', '-42', '123456789012345', '-999999999999999'],
  i: ['0', '-2147483648', '2147483647', '65536'],
  x: ['0', '0.125', '-1.5', '3.141592653589793', '1e+21', '5e-7', '123456789012345', '100000000000000000000'],
  b: ['true', 'false'],
};
const OTHER_VALUES: Record<string, readonly string[]> = {
  s: ['"caf\\u00e9"', '"tab\\there"', '"\u00e9t\u00e9"', '"a\\"b"'],
  l: ['1.0', '-0', '1234567890123456', '9223372036854775807', '1e3', '00'],
  i: ['2147483648', '-2147483649', '1.5', '-0'],
  x: ['1.50', '1E5', '-0', '0.10', '12345678901234567', '1e400'],
  b: ['1', 'null', '"true"'],
};

function cell(value: string, timestamp: string | undefined): string {
  const parts = [`"value"${ws()}:${ws()}${value}`];
  if (timestamp !== undefined) parts.push(`"timestamp"${ws()}:${ws()}${timestamp}`);
  if (random() < 0.5) parts.reverse();
  return `{${ws()}${parts.join(`${ws()},${ws()}`)}${ws()}}`;
}

function rowLine(entityId: string, families: [string, [string, string][]][]): string {
  const cells = families.map(
    ([f, cols]) => `"${f}"${ws()}:${ws()}{${cols.map(([q, c]) => `${ws()}"${q}"${ws()}:${ws()}[${ws()}${c}${ws()}]`).join(',')}${ws()}}`,
  );
  const parts = [`"entityId"${ws()}:${ws()}${entityId}`, `"cells"${ws()}:${ws()}{${cells.join(`${ws()},${ws()}`)}}`];
  if (random() < 0.3) parts.reverse();
  return `${ws()}{${ws()}${parts.join(`${ws()},${ws()}`)}${ws()}}${ws()}`;
}

const entityId = (): string => pick([`["u${Math.floor(random() * 1000)}", ${Math.floor(random() * 1e6)}]`, `[ "o'k" , -3 ]`, `["x\\u0041y", 5]`]);
const timestamp = (): string | undefined => pick([undefined, '0', '1700000000000', String(NOW + 5), '999999999999999']);

t.test('every line the plain path takes is packed byte for byte as the general path packs it', async (t) => {
  const s = await setup(t);
  const encoder = new PlainLineEncoder(s.layout, s.schemas, Infinity);
  let taken = 0;
  for (let n = 0; n < 3000; n++) {
    const columns = ['s', 'l', 'i', 'x', 'b'].filter(() => random() < 0.7);
    if (columns.length === 0) columns.push('s');
    const families: [string, [string, string][]][] = [['d', columns.map((q) => [q, cell(pick(PLAIN_VALUES[q]!), timestamp())])]];
    if (random() < 0.4)
      families.push([
        'm',
        [
          [`k${Math.floor(random() * 5)}`, cell(pick(PLAIN_VALUES.s!), timestamp())],
          ['k9', cell('"v"', timestamp())],
        ],
      ]);
    if (random() < 0.3) families.push(['a', [['z', cell('12', timestamp())]]]);
    if (random() < 0.3) families.reverse();
    const line = Buffer.from(rowLine(entityId(), families));
    const general = await generalPath(line, s);
    const plain = plainPath(line, encoder, s);
    if (general.bytes === undefined) t.fail(`the general path refused a generated row (${general.error}): ${line}`);
    else if (plain === undefined) t.fail(`the plain path left a row in its shape: ${line}`);
    else if (!plain.equals(general.bytes)) t.fail(`different bytes for ${line}`);
    else taken++;
  }
  t.equal(taken, 3000, 'all 3000 generated plain rows taken, each packed as the general path packs it');
});

t.test('lines the plain path is not sure of are left to the general path', async (t) => {
  const s = await setup(t);
  const encoder = new PlainLineEncoder(s.layout, s.schemas, Infinity);
  // Warm the caches the plain path reads (a first row goes through the general path).
  await generalPath(Buffer.from(rowLine('["w", 1]', [['d', ['s', 'l', 'i', 'x', 'b'].map((q) => [q, cell(PLAIN_VALUES[q]![0]!, '1')])]])), s);
  const left: string[] = [];
  for (const [q, values] of Object.entries(OTHER_VALUES))
    for (const v of values) left.push(`{"entityId":["a",1],"cells":{"d":{"${q}":[{"value":${v},"timestamp":5}]}}}`);
  left.push(
    '{"entityId":["a",1],"cells":{"d":{"f":[{"value":0.1,"timestamp":5}]}}}', // float: rounded by the codec
    '{"entityId":["a",1],"cells":{"d":{"u":[{"value":null}]}}}', // a union
    '{"entityId":["a",1],"cells":{"d":{"c":[{"value":3}]}}}', // a counter
    '{"entityId":["a",1],"cells":{"d":{"s":[{"value":"a","writer_schema":"string"}]}}}',
    '{"entityId":["a",1],"cells":{"d":{"s":[{"value":"a","timestamp":-1}]}}}', // skipped cell
    '{"entityId":["a",1],"cells":{"d":{"s":[{"value":"a","timestamp":null}]}}}',
    '{"entityId":["a",1],"cells":{"d":{"s":[{"value":"a","timestamp":1.5}]}}}',
    '{"entityId":["a",1],"cells":{"d":{"s":[{"value":"a","timestamp":1234567890123456}]}}}',
    '{"entityId":["a",1],"cells":{"d":{"s":[{"value":"a","timestamp":5},{"value":"b","timestamp":6}]}}}', // two versions
    '{"entityId":["a",1],"cells":{"d":{"s":[]}}}',
    '{"entityId":["a",1],"cells":{"d":{}}}',
    '{"entityId":["a",1],"cells":{}}',
    '{"entityId":["a",1]}',
    '{"entityId":["a",1],"cells":{"d":{"s":[{"value":"a"}]},"d":{"l":[{"value":1}]}}}', // family twice
    '{"entityId":["a",1],"cells":{"d":{"s":[{"value":"a"}],"s":[{"value":"b"}]}}}', // column twice
    '{"entityId":["a",1],"entityId":["b",2],"cells":{"d":{"s":[{"value":"a"}]}}}',
    '{"entityId":["a",1],"cells":{"d":{"s":[{"value":"a","value":"b"}]}}}',
    '{"entityId":["a",1],"cells":{"d":{"nope":[{"value":"a"}]}}}', // unknown column
    '{"entityId":["a",1],"cells":{"zz":{"s":[{"value":"a"}]}}}', // unknown family
    '{"entityId":["a",1],"cells":{"d":{"s":[{"value":"a"}]}},"rowKey":"00"}',
    '{"entityId":"hbase=abc","cells":{"d":{"s":[{"value":"a"}]}}}', // a row key form
    '{"entityId":[],"cells":{"d":{"s":[{"value":"a"}]}}}',
    '{"entityId":["\u00e9",1],"cells":{"d":{"s":[{"value":"a"}]}}}', // not ASCII
    '{"entityId":["a",1],"cells":{"t":{"v":[{"value":"old","timestamp":5}]}}}', // past its family's TTL
    '{"entityId":["a",1],"cells":{"d":{"s":[{"value":"a"}]}}} x',
    '{"entityId":["a",1],"cells":{"d":{"s":[{"value":"a"}]}}',
    '{"entityId":["a",1],"cells":{"d":{"s":[{"value":"a"}]}},}',
    '{"entityId":["a",1],"cells":{"d":{"s":[{"value":"a"}],}}}',
    '{"entityId":["a",1],"cells":{"d":{"s":[{"value":"a\u0001"}]}}}',
    '{"entityId":["a",1],"cells":{"d":{"l":[{"value":12a}]}}}',
    '{"entityId":["a",1],"cells":{"d":{"b":[{"value":truex}]}}}',
    '{"entityId":["a",1],"cells":{"d":{"s":[{"value":"a"}]}}}\u0000',
    '{"entityId":["a",1,],"cells":{"d":{"s":[{"value":"a"}]}}}',
    '{"entityId":["a",1],"cells":{"d":{"s":[{"value":"a"}]}}}}',
    '[{"entityId":["a",1],"cells":{"d":{"s":[{"value":"a"}]}}}]',
    '',
  );
  for (const text of left) {
    const line = Buffer.from(text);
    t.equal(plainPath(line, encoder, s), undefined, `left to the general path: ${text}`);
  }
  // The same lines in the plain shape are taken: what each one changes is what sends it away.
  t.not(plainPath(Buffer.from('{"entityId":["a",1],"cells":{"d":{"s":[{"value":"a","timestamp":5}]}}}'), encoder, s), undefined, 'the plain form is taken');
  const fresh = Buffer.from(`{"entityId":["a",1],"cells":{"t":{"v":[{"value":"new","timestamp":${NOW - 1000}}]}}}`);
  const general = await generalPath(fresh, s); // also warms the family's caches
  t.same(plainPath(fresh, encoder, s), general.bytes, 'within the TTL: taken, the same bytes');
  // An escaped entity id component: stored rows hold no entity id text, so only the key matters.
  const escaped = Buffer.from('{"entityId":["\\u00e9",1],"cells":{"d":{"s":[{"value":"a","timestamp":5}]}}}');
  t.same(plainPath(escaped, encoder, s), (await generalPath(escaped, s)).bytes, 'an escaped entity id component: taken, the same bytes');
});

t.test('a column the plain path met with a cold cache is taken once the general path warmed it', async (t) => {
  const s = await setup(t);
  const encoder = new PlainLineEncoder(s.layout, s.schemas, Infinity);
  const line = Buffer.from('{"entityId":["a",1],"cells":{"d":{"l":[{"value":5,"timestamp":9}]}}}');
  t.equal(plainPath(line, encoder, s), undefined, 'cold: left to the general path');
  const general = await generalPath(line, s);
  t.same(plainPath(line, encoder, s), general.bytes, 'warm: taken, and the same bytes');
});

t.test('a row key over the store limit is left to the general path', async (t) => {
  const s = await setup(t);
  const line = Buffer.from('{"entityId":["a-long-name",1],"cells":{"d":{"s":[{"value":"a","timestamp":9}]}}}');
  await generalPath(line, s);
  t.equal(plainPath(line, new PlainLineEncoder(s.layout, s.schemas, 8), s), undefined, 'over 8 bytes: left');
  t.not(plainPath(line, new PlainLineEncoder(s.layout, s.schemas, 64), s), undefined, 'within 64 bytes: taken');
});

t.test('a double is taken as written only when it is the text the codec prints for it', async (t) => {
  const s = await setup(t);
  const encoder = new PlainLineEncoder(s.layout, s.schemas, Infinity);
  const digits = (n: number, zeros: number): string => Array.from({ length: n }, () => (random() < zeros ? 0 : Math.floor(random() * 10))).join('');
  let taken = 0;
  let checked = 0;
  for (let n = 0; n < 4000; n++) {
    const integer = random() < 0.4 ? '0' : `${1 + Math.floor(random() * 9)}${digits(Math.floor(random() * 15), 0.2)}`;
    const fraction = digits(1 + Math.floor(random() * 17), 0.3);
    const text = `${random() < 0.2 ? '-' : ''}${integer}.${fraction}${random() < 0.05 ? 'e-3' : ''}`;
    const line = Buffer.from(`{"entityId":["d",${n}],"cells":{"d":{"x":[{"value":${text},"timestamp":5}]}}}`);
    const general = await generalPath(line, s);
    const plain = plainPath(line, encoder, s);
    checked++;
    if (plain === undefined) continue;
    taken++;
    if (!plain.equals(general.bytes!)) t.fail(`${text} taken as written, but the codec prints ${String(Number(text))}`);
  }
  t.equal(checked, 4000);
  t.ok(taken > 1000, `${taken} of 4000 random decimals taken, each as the codec prints it`);
});
