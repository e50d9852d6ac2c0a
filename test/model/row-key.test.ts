import { createHash, randomBytes } from 'node:crypto';
import t from 'tap';
import { compareBytes, decodeRowKey, encodeRowKey, md5Into } from '../../lib/model/keys/row-key.js';
import type { ComponentType, ComponentValue, RowKeyFormat } from '../../lib/model/types.js';
import {
  DOCS_TABLE,
  F3,
  HASH,
  HASH_PREFIX,
  PLAYERS,
  RAW,
  RKF2_FORMATTED,
  SAMPLE_TABLE,
  SUPPRESSED,
  formatted,
  prng,
  randomInt,
  randomLong,
  randomString,
} from './key-fixtures.js';

const hex = (key: Buffer) => key.toString('hex');
const bytes = (h: string) => Buffer.from(h.replace(/[ |]/g, ''), 'hex');
const BAD_EID = { code: 'RG_ERR_BAD_ENTITY_ID' };
const BAD_KEY = { code: 'RG_ERR_BAD_ROW_KEY' };

t.test('HASH: full 16-byte MD5 of the kiji key (TestHashedEntityId and rkf_hashed vectors)', async (t) => {
  t.equal(hex(encodeRowKey(HASH, ['\x11\x22'])), 'c700ed4fdb1d27055aa3faa2c2432283');
  t.equal(hex(encodeRowKey(HASH, ['alice'])), '6384e2b2184bcbf58eccf10ca7a6563c');
  t.equal(decodeRowKey(HASH, bytes('6384e2b2184bcbf58eccf10ca7a6563c')), undefined);
});

t.test('HASH_PREFIX: MD5 prefix then the kiji key (TestHashPrefixedEntityId and rkf_hashprefixed vectors)', async (t) => {
  const four: RowKeyFormat = { encoding: 'HASH_PREFIX', hashSize: 4 };
  t.equal(hex(encodeRowKey(four, ['\x11\x22'])), 'c700ed4f1122');
  t.equal(hex(encodeRowKey(HASH_PREFIX, ['alice'])), '6384616c696365');
  t.same(decodeRowKey(HASH_PREFIX, bytes('6384616c696365')), ['alice']);
  t.same(decodeRowKey(four, bytes('c700ed4f1122')), ['\x11\x22']);
  const zero: RowKeyFormat = { encoding: 'HASH_PREFIX', hashSize: 0 };
  t.equal(hex(encodeRowKey(zero, ['ab'])), '6162');
});

t.test('RAW: the UTF-8 bytes of the single string component', async (t) => {
  t.equal(hex(encodeRowKey(RAW, ['alice'])), '616c696365');
  t.equal(hex(encodeRowKey(RAW, ['é'])), 'c3a9');
  t.equal(decodeRowKey(RAW, bytes('616c696365')), undefined);
});

t.test('FORMATTED sample_table (one LONG): reference keys', async (t) => {
  const vectors: [number, string][] = [
    [42, '34b9800000000000002a'],
    [-1, 'bd5f7fffffffffffffff'],
    [12345, '44018000000000003039'],
    [2345, 'a2378000000000000929'],
    [56789, '3e02800000000000ddd5'],
    [54321, '76d8800000000000d431'],
    [54323, '63bb800000000000d433'],
    [54324, '3760800000000000d434'],
    [54325, '2e1a800000000000d435'],
    [55025, 'af51800000000000d6f1'],
    [1298404763, '9ee9800000004d64159b'],
  ];
  for (const [n, key] of vectors) {
    t.equal(hex(encodeRowKey(SAMPLE_TABLE, [n])), key, `[${n}] (number promoted to LONG)`);
    t.equal(hex(encodeRowKey(SAMPLE_TABLE, [BigInt(n)])), key, `[${n}n]`);
    t.same(decodeRowKey(SAMPLE_TABLE, bytes(key)), [BigInt(n)], `decode ${key}`);
  }
});

t.test('FORMATTED rkf2_formatted: terminators after every string, trailing nulls omitted', async (t) => {
  t.equal(hex(encodeRowKey(RKF2_FORMATTED, ['x', 'a', 'b', 1, -1])), '9dd4780061006200800000017fffffffffffffff');
  t.equal(hex(encodeRowKey(RKF2_FORMATTED, ['x', 'a'])), '9dd478006100');
  t.equal(hex(encodeRowKey(RKF2_FORMATTED, ['x', 'a', null, null])), '9dd478006100');
  t.equal(hex(encodeRowKey(RKF2_FORMATTED, ['', ''])), 'd41d0000');
  t.same(decodeRowKey(RKF2_FORMATTED, bytes('9dd4 7800 6100')), ['x', 'a', null, null, null]);
  t.same(decodeRowKey(RKF2_FORMATTED, bytes('9dd4780061006200800000017fffffffffffffff')), ['x', 'a', 'b', 1, -1n]);
  t.same(decodeRowKey(RKF2_FORMATTED, bytes('d41d0000')), ['', '', null, null, null]);
});

t.test('FORMATTED with range_scan_start_index 2 hashes both components without terminators', async (t) => {
  t.equal(hex(encodeRowKey(F3, ['one', 1, 7])), 'c4a86f6e6500800000018000000000000007');
  t.same(decodeRowKey(F3, bytes('c4a86f6e6500800000018000000000000007')), ['one', 1, 7n]);
});

t.test('FORMATTED with suppressed materialization: the hash prefix only', async (t) => {
  t.equal(hex(encodeRowKey(SUPPRESSED, ['x', 'a', 'b', 1, -1])), '1535');
  t.equal(decodeRowKey(SUPPRESSED, bytes('1535')), undefined);
});

t.test('FORMATTED players and docs example keys', async (t) => {
  const players: [string[], string][] = [
    [['cassander', 'greece'], '0ca863617373616e6465720067726565636500'],
    [['ptolemaios', 'africa.north'], '2d3970746f6c656d61696f73006166726963612e6e6f72746800'],
    [['antipater', 'makedonia'], 'b735616e74697061746572006d616b65646f6e696100'],
    [['antipater'], 'b735616e7469706174657200'],
    [['menandros', 'asia.minor'], 'be0c6d656e616e64726f7300617369612e6d696e6f7200'],
    [['seleukos', 'asia.central'], 'fa5773656c65756b6f7300617369612e63656e7472616c00'],
    [['seleukos', 'makedonia'], 'fa5773656c65756b6f73006d616b65646f6e696100'],
  ];
  for (const [eid, key] of players) {
    t.equal(hex(encodeRowKey(PLAYERS, eid)), key, JSON.stringify(eid));
    t.same(decodeRowKey(PLAYERS, bytes(key)), eid.length === 1 ? [...eid, null] : eid);
  }
  const docsKey = '3f0b636f6d706f6e656e743100636f6d706f6e656e743200636f6d706f6e656e7433008000007b8000000000000141';
  t.equal(hex(encodeRowKey(DOCS_TABLE, ['component1', 'component2', 'component3', 123, 321])), docsKey);
  t.same(decodeRowKey(DOCS_TABLE, bytes(docsKey)), ['component1', 'component2', 'component3', 123, 321n]);
});

t.test('INTEGER and LONG encode big-endian with the sign bit flipped', async (t) => {
  const ints = formatted([['i', 'INTEGER']], { hashSize: 1 });
  const longs = formatted([['l', 'LONG']], { hashSize: 1 });
  const intVectors: [number, string][] = [
    [-(2 ** 31), '00000000'],
    [-1, '7fffffff'],
    [0, '80000000'],
    [1, '80000001'],
    [2 ** 31 - 1, 'ffffffff'],
  ];
  for (const [v, enc] of intVectors) {
    const key = encodeRowKey(ints, [v]);
    t.equal(hex(key.subarray(1)), enc, `INTEGER ${v}`);
    t.same(decodeRowKey(ints, key), [v]);
  }
  const longVectors: [bigint, string][] = [
    [-(2n ** 63n), '0000000000000000'],
    [-1n, '7fffffffffffffff'],
    [0n, '8000000000000000'],
    [42n, '800000000000002a'],
    [2n ** 63n - 1n, 'ffffffffffffffff'],
  ];
  for (const [v, enc] of longVectors) {
    const key = encodeRowKey(longs, [v]);
    t.equal(hex(key.subarray(1)), enc, `LONG ${v}`);
    t.same(decodeRowKey(longs, key), [v]);
  }
  // Either side of 2^53 and of the 32-bit halves (values within 2^53 are decoded through one double).
  const edges = [0n, 1n << 32n, 1n << 53n, 1n << 62n].flatMap((e) => [e - 2n, e - 1n, e, e + 1n, -e - 1n, -e, -e + 1n]);
  for (const v of edges) {
    const got = decodeRowKey(longs, encodeRowKey(longs, [v]))![0];
    t.ok(got === v, `LONG ${v} decodes to itself (${String(got)})`);
  }
});

t.test('encode errors say exactly what is wrong', async (t) => {
  const two = formatted(
    [
      ['uid', 'LONG'],
      ['name', 'STRING'],
    ],
    { nullableStartIndex: 2 },
  );
  t.throws(() => encodeRowKey(two, [1, 'a', 'b']), { ...BAD_EID, message: 'entity id has 3 components but the table key has 2: [1,"a","b"]' });
  t.throws(() => encodeRowKey(two, [1]), {
    ...BAD_EID,
    message: 'entity id has 1 component but the table key needs at least 2 (components before index 2 cannot be null): [1]',
  });
  t.throws(() => encodeRowKey(two, [1, null]), {
    ...BAD_EID,
    message: "component 'name' (index 1) cannot be null (components before index 2 are required): [1,null]",
  });
  t.throws(() => encodeRowKey(two, ['x', 'a']), { ...BAD_EID, message: 'component \'uid\' (index 0) must be a LONG, got the string "x"' });
  t.throws(() => encodeRowKey(two, [1, 5]), { ...BAD_EID, message: "component 'name' (index 1) must be a STRING, got the number 5" });
  t.throws(() => encodeRowKey(two, [2n ** 63n, 'a']), {
    ...BAD_EID,
    message: "component 'uid' (index 0) must be a LONG (a 64-bit integer), got the number 9223372036854775808",
  });
  t.throws(() => encodeRowKey(two, [1.5, 'a']), { ...BAD_EID, message: /must be a LONG \(a 64-bit integer\), got the number 1.5/ });
  t.throws(() => encodeRowKey(two, [2 ** 60, 'a']), { ...BAD_EID, message: /must be a LONG/ });
  t.throws(() => encodeRowKey(RKF2_FORMATTED, ['x', null, 'b']), {
    ...BAD_EID,
    message: 'component \'str2\' (index 2) is not null but follows the null component at index 1 (only trailing components may be null): ["x",null,"b"]',
  });
  t.throws(() => encodeRowKey(RKF2_FORMATTED, ['x', 'a\0b']), {
    ...BAD_EID,
    message: 'component \'str1\' (index 1) must not contain U+0000 (it terminates STRING components in the row key): "a\\u0000b"',
  });
  t.throws(() => encodeRowKey(RKF2_FORMATTED, ['x', '\ud800']), { ...BAD_EID, message: /component 'str1' \(index 1\) has an unpaired UTF-16 surrogate/ });
  t.throws(() => encodeRowKey(RKF2_FORMATTED, []), {
    ...BAD_EID,
    message: 'entity id has 0 components but the table key needs at least 1 (components before index 1 cannot be null): []',
  });
  t.throws(() => encodeRowKey(RKF2_FORMATTED, [null]), { ...BAD_EID, message: /component 'dummy' \(index 0\) cannot be null/ });
});

t.test('INTEGER components reject 64-bit and non-integer values', async (t) => {
  const f = formatted([['n', 'INTEGER']]);
  t.throws(() => encodeRowKey(f, [2 ** 31]), {
    ...BAD_EID,
    message: "component 'n' (index 0) must be an INTEGER (a 32-bit integer, -2147483648..2147483647), got the number 2147483648",
  });
  t.throws(() => encodeRowKey(f, [-(2 ** 31) - 1]), { ...BAD_EID, message: /got the number -2147483649/ });
  t.throws(() => encodeRowKey(f, [5n]), { ...BAD_EID, message: /must be an INTEGER \(a 32-bit integer.*got the number 5$/ });
  t.throws(() => encodeRowKey(f, [0.5]), BAD_EID);
  t.throws(() => encodeRowKey(f, ['1']), { ...BAD_EID, message: 'component \'n\' (index 0) must be an INTEGER, got the string "1"' });
});

t.test('single-key formats take exactly one string', async (t) => {
  t.throws(() => encodeRowKey(RAW, ['a', 'b']), { ...BAD_EID, message: 'a RAW row key takes exactly one string component, got 2 components: ["a","b"]' });
  t.throws(() => encodeRowKey(HASH, [5]), { ...BAD_EID, message: 'a HASH row key takes exactly one string component, got the number 5: [5]' });
  t.throws(() => encodeRowKey(HASH_PREFIX, [null]), { ...BAD_EID, message: /HASH_PREFIX row key takes exactly one string component, got null/ });
  t.throws(() => encodeRowKey(RAW, []), BAD_EID);
  t.throws(() => encodeRowKey(RAW, ['']), { ...BAD_EID, message: 'entity id [""] gives an empty row key, which no store can hold' });
  t.throws(() => encodeRowKey(RAW, ['\udc00']), { ...BAD_EID, message: /unpaired UTF-16 surrogate/ });
});

t.test('decode rejects malformed keys', async (t) => {
  t.throws(() => decodeRowKey(RKF2_FORMATTED, Buffer.alloc(0)), { ...BAD_KEY, message: 'row key is empty' });
  t.throws(() => decodeRowKey(RAW, Buffer.alloc(0)), BAD_KEY);
  t.throws(() => decodeRowKey(RKF2_FORMATTED, bytes('9d')), {
    ...BAD_KEY,
    message: 'row key 9d is not a valid FORMATTED key: it is shorter than the 2-byte hash prefix',
  });
  t.throws(() => decodeRowKey(RKF2_FORMATTED, bytes('9dd4')), {
    ...BAD_KEY,
    message: 'row key 9dd4 is not a valid FORMATTED key: it has 0 components but the table key needs at least 1',
  });
  t.throws(() => decodeRowKey(RKF2_FORMATTED, bytes('9dd478')), {
    ...BAD_KEY,
    message: "row key 9dd478 is not a valid FORMATTED key: component 'dummy' (index 0) at byte 2 has no 0x00 terminator",
  });
  t.throws(() => decodeRowKey(RKF2_FORMATTED, bytes('9dd4 7800 6100 6200 800000')), {
    ...BAD_KEY,
    message: /component 'anint' \(index 3\) at byte 8 needs 4 bytes, only 3 left/,
  });
  t.throws(() => decodeRowKey(SAMPLE_TABLE, bytes('4401 8000000000003039 00')), {
    ...BAD_KEY,
    message: 'row key 4401800000000000303900 is not a valid FORMATTED key: 1 extra bytes after the last component',
  });
  t.throws(() => decodeRowKey(SAMPLE_TABLE, bytes('4401 80000000')), { ...BAD_KEY, message: /needs 8 bytes, only 4 left/ });
  t.throws(() => decodeRowKey(SUPPRESSED, bytes('1535 00')), {
    ...BAD_KEY,
    message: 'row key 153500 is not a valid FORMATTED key: the table suppresses key materialization, so the key is the 2-byte hash only, but it has 3 bytes',
  });
  t.throws(() => decodeRowKey(PLAYERS, bytes('0000 ff00')), {
    ...BAD_KEY,
    message: "row key 0000ff00 is not a valid FORMATTED key: component 'player' (index 0) at byte 2 is not valid UTF-8",
  });
  t.throws(() => decodeRowKey(HASH_PREFIX, bytes('63')), {
    ...BAD_KEY,
    message: 'row key 63 is not a valid HASH_PREFIX key: it is shorter than the 2-byte hash prefix',
  });
  t.throws(() => decodeRowKey(HASH_PREFIX, bytes('6384 c3')), { ...BAD_KEY, message: /the key after the hash prefix is not valid UTF-8/ });
  // A real U+FFFD in a key is valid UTF-8 and decodes.
  t.same(decodeRowKey(PLAYERS, bytes('0000 efbfbd00')), ['\uFFFD', null]);
});

t.test('compareBytes is unsigned lexicographic, shorter prefix first', async (t) => {
  t.ok(compareBytes(bytes('80'), bytes('7f')) > 0);
  t.ok(compareBytes(bytes('ff'), bytes('00ff')) > 0);
  t.ok(compareBytes(bytes('61'), bytes('6100')) < 0);
  t.equal(compareBytes(bytes('0102'), bytes('0102')), 0);
});

function randomValue(rand: () => number, type: ComponentType): ComponentValue {
  if (type === 'STRING') return randomString(rand);
  if (type === 'INTEGER') return randomInt(rand);
  const v = randomLong(rand);
  return rand() < 0.2 && v >= BigInt(Number.MIN_SAFE_INTEGER) && v <= BigInt(Number.MAX_SAFE_INTEGER) ? Number(v) : v;
}

const TYPES: ComponentType[] = ['STRING', 'INTEGER', 'LONG'];

function randomFormat(rand: () => number): Extract<RowKeyFormat, { encoding: 'FORMATTED' }> {
  const n = 1 + Math.floor(rand() * 5);
  const comps: [string, ComponentType][] = Array.from({ length: n }, (_, i) => [`c${i}`, TYPES[Math.floor(rand() * 3)]!]);
  return formatted(comps, {
    hashSize: 1 + Math.floor(rand() * 16),
    rangeScanStartIndex: 1 + Math.floor(rand() * n),
    nullableStartIndex: 1 + Math.floor(rand() * n),
  });
}

function normalized(v: ComponentValue, type: ComponentType): ComponentValue {
  return type === 'LONG' && typeof v === 'number' ? BigInt(v) : v;
}

t.test('random formats and components: encode -> decode -> encode gives the same key', async (t) => {
  const rand = prng(1337);
  let checked = 0;
  for (let round = 0; round < 3000; round++) {
    const format = randomFormat(rand);
    const specs = format.components;
    const given = format.nullableStartIndex + Math.floor(rand() * (specs.length - format.nullableStartIndex + 1));
    const comps: ComponentValue[] = specs.slice(0, given).map((s) => randomValue(rand, s.type));
    if (rand() < 0.3 && given < specs.length) comps.push(null);
    const key = encodeRowKey(format, comps);
    const decoded = decodeRowKey(format, key)!;
    const expected = specs.map((s, i) => (i < given ? normalized(comps[i]!, s.type) : null));
    if (!t.strictSame(decoded, expected, 'decoded components', { format, comps: String(comps) })) break;
    if (!encodeRowKey(format, decoded).equals(key)) {
      t.fail(`re-encoding ${String(decoded)} changed the key`);
      break;
    }
    checked++;
  }
  t.equal(checked, 3000);
});

function semanticCompare(a: readonly ComponentValue[], b: readonly ComponentValue[]): number {
  for (let i = 0; i < Math.max(a.length, b.length); i++) {
    const x = a[i] ?? null;
    const y = b[i] ?? null;
    if (x === null || y === null) {
      if (x === y) continue;
      return x === null ? -1 : 1;
    }
    const c =
      typeof x === 'string' ? Buffer.compare(Buffer.from(x), Buffer.from(y as string)) : x < (y as number | bigint) ? -1 : x > (y as number | bigint) ? 1 : 0;
    if (c !== 0) return c;
  }
  return 0;
}

t.test('keys with the same hash prefix sort as their components: nulls first, numbers numerically', async (t) => {
  const f = RKF2_FORMATTED;
  const chain: ComponentValue[][] = [
    ['x', 'a0', 'aa'],
    ['x', 'a0', 'aa', -1],
    ['x', 'a0', 'aa', 0],
    ['x', 'a0', 'aa', 2147483647],
    ['x', 'a0', 'aa0', -1],
    ['x', 'a0', 'aa0', -1, -(2n ** 63n)],
    ['x', 'a0', 'aa0', -1, 0n],
    ['x', 'a0', 'aa0', -1, 2n ** 63n - 1n],
  ];
  for (let i = 1; i < chain.length; i++) {
    t.ok(compareBytes(encodeRowKey(f, chain[i - 1]!), encodeRowKey(f, chain[i]!)) < 0, `${String(chain[i - 1])} < ${String(chain[i])}`);
  }
  const rand = prng(7);
  let bad = 0;
  for (let i = 0; i < 3000; i++) {
    const gen = () => {
      const n = 1 + Math.floor(rand() * 4);
      return f.components.slice(0, n + 1).map((s, j) => (j === 0 ? 'x' : randomValue(rand, s.type)));
    };
    const a = gen();
    const b = gen();
    if (Math.sign(compareBytes(encodeRowKey(f, a), encodeRowKey(f, b))) !== Math.sign(semanticCompare(a, b))) bad++;
  }
  t.equal(bad, 0, 'byte order agrees with component order');
});

t.test("md5Into writes the first count bytes of node's MD5, into its own input too, at any length", async (t) => {
  const md5 = (data: Uint8Array): Buffer => createHash('md5').update(data).digest();
  for (const length of [0, 1, 8, 55, 56, 64, 200]) {
    const data = randomBytes(length + 4);
    const target = Buffer.alloc(16);
    md5Into(target, 16, data, 4, 4 + length);
    t.equal(target.toString('hex'), md5(data.subarray(4)).toString('hex'), `${length} bytes`);
  }
  // A salt is written over the head of the key it hashes.
  const key = Buffer.from('0011' + '8000000000bc614e', 'hex');
  const expected = md5(key.subarray(2));
  md5Into(key, 2, key, 2, key.length);
  t.equal(key.subarray(0, 2).toString('hex'), expected.subarray(0, 2).toString('hex'));
  t.equal(key.subarray(2).toString('hex'), '8000000000bc614e', 'the hashed bytes are left as they were');
});
