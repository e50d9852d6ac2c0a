/**
 * The Avro export's long (lib/model/avro/export-long.ts) writes the Avro specification's zigzag
 * varint for every 64-bit integer, given as a number or a bigint, the same bytes both ways; reads
 * it back as a bigint; and refuses what is no 64-bit integer.
 */
import avro from 'avsc';
import t from 'tap';
import { EXPORT_LONG } from '../../lib/model/avro/export-long.js';

/** The specification's encoding, written plainly: zigzag, then 7 bits a byte, low first. */
function zigzagVarint(n: bigint): Buffer {
  let z = n >= 0n ? n << 1n : (-n << 1n) - 1n;
  const out: number[] = [];
  for (; z >= 128n; z >>= 7n) out.push(Number(z & 127n) | 0x80);
  out.push(Number(z));
  return Buffer.from(out);
}

const edges = [0n, 1n, -1n, 63n, 64n, -64n, -65n, 127n, 128n, 2n ** 28n - 1n, 2n ** 28n, 2n ** 30n, -(2n ** 30n), 2n ** 31n, 1_700_000_000_000n];
for (const p of [35n, 36n, 42n, 49n, 52n, 53n, 56n, 62n]) edges.push(2n ** p - 1n, 2n ** p, -(2n ** p), -(2n ** p) + 1n);
edges.push(2n ** 63n - 1n, -(2n ** 63n), -(2n ** 63n) + 1n);
// A seeded generator: the same values every run, spread over every magnitude.
let seed = 0x2545f491n;
const next = (): bigint => (seed = (seed * 6364136223846793005n + 1442695040888963407n) & (2n ** 64n - 1n));
const values = [...edges, ...Array.from({ length: 3000 }, (_, i) => BigInt.asIntN(64, next()) >> BigInt(i % 64))];

t.test('every 64-bit integer is its zigzag varint, as a bigint and (where safe) as a number', async (t) => {
  let wrong = 0;
  for (const v of values) {
    const expected = zigzagVarint(v);
    if (!EXPORT_LONG.toBuffer(v).equals(expected)) wrong++;
    const n = Number(v);
    if (Number.isSafeInteger(n) && !EXPORT_LONG.toBuffer(n).equals(expected)) wrong++;
    if (EXPORT_LONG.fromBuffer(expected) !== v) wrong++;
  }
  t.equal(wrong, 0, `${values.length} values, none written or read wrong`);
});

t.test("inside a record: the bytes of avsc's own long where both can write the value", async (t) => {
  const own = avro.Type.forSchema({
    type: 'record',
    name: 'r',
    fields: [
      { name: 'ts', type: 'long' },
      { name: 's', type: 'string' },
    ],
  });
  const ours = avro.Type.forSchema(
    {
      type: 'record',
      name: 'r',
      fields: [
        { name: 'ts', type: 'long' },
        { name: 's', type: 'string' },
      ],
    },
    { registry: { long: EXPORT_LONG } } as never,
  );
  for (const ts of [0, -5, 1_700_000_000_123, 2 ** 40 + 7]) t.same(ours.toBuffer({ ts, s: 'x' }), own.toBuffer({ ts, s: 'x' }), `ts ${ts}`);
});

t.test('what is no 64-bit integer is refused', async (t) => {
  for (const bad of [1.5, 2 ** 53, Number.NaN, 2n ** 63n, -(2n ** 63n) - 1n, '12', null]) t.throws(() => EXPORT_LONG.toBuffer(bad), `${String(bad)}`);
});
