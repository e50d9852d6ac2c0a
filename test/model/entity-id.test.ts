import t from 'tap';
import {
  compileWildcard,
  entityIdFromBody,
  formatEntityIdJson,
  formatShellEntityId,
  parseEntityIdText,
  parseShellEntityId,
  resolveEntityId,
} from '../../lib/model/keys/entity-id.js';
import { componentsToJson, decodeRowKey, encodeRowKey } from '../../lib/model/keys/row-key.js';
import { toStringBinary } from '../../lib/model/keys/binary-text.js';
import { WILDCARD, type ComponentValue, type EntityIdInput, type RowKeyFormat, type Wildcard } from '../../lib/model/types.js';
import {
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
  randomBytes,
  randomInt,
  randomLong,
  randomString,
} from './key-fixtures.js';

const bytes = (h: string) => Buffer.from(h.replace(/ /g, ''), 'hex');
const BAD_EID = { code: 'RG_ERR_BAD_ENTITY_ID' };
const BAD_KEY = { code: 'RG_ERR_BAD_ROW_KEY' };
const NO_WILDCARD = { code: 'RG_ERR_WILDCARD_NOT_ALLOWED' };
const R3 = { allowWildcards: false };
const R3_SCAN = { allowWildcards: true };

function components(input: EntityIdInput): readonly (ComponentValue | Wildcard)[] {
  if (input.kind !== 'components') throw new Error(`expected components, got a row key: ${input.text}`);
  return input.components;
}
function rowKeyHex(input: EntityIdInput): string {
  if (input.kind !== 'rowKey') throw new Error(`expected a row key, got components: ${input.text}`);
  return input.rowKey.toString('hex');
}

t.test('revision 3 URL: JSON arrays with double or single quotes, integers, null', async (t) => {
  t.same(parseEntityIdText('[12345]', R3), { kind: 'components', components: [12345], text: '[12345]' });
  t.same(components(parseEntityIdText(` [ "a" , 'b\\'c', null, -5 ] `, R3)), ['a', "b'c", null, -5]);
  t.same(components(parseEntityIdText('["a\\"b\\\\c\\/\\n\\t\\u00e9\\ud83d\\ude00"]', R3)), ['a"b\\c/\n\té😀']);
  t.same(components(parseEntityIdText('[0, -0, 2147483648]', R3)), [0, 0, 2147483648]);
});

t.test('revision 3 URL: integers beyond the safe range become exact bigints', async (t) => {
  t.same(components(parseEntityIdText('[9007199254740991, -9007199254740991]', R3)), [9007199254740991, -9007199254740991]);
  t.same(components(parseEntityIdText('[9007199254740992]', R3)), [9007199254740992n]);
  t.same(components(parseEntityIdText('[9223372036854775807, -9223372036854775808]', R3)), [2n ** 63n - 1n, -(2n ** 63n)]);
  t.throws(() => parseEntityIdText('[9223372036854775808]', R3), {
    ...BAD_EID,
    message: 'entity id "[9223372036854775808]": integer 9223372036854775808 is outside the 64-bit range at position 1',
  });
  t.throws(() => parseEntityIdText('[-9223372036854775809]', R3), { ...BAD_EID, message: /integer -9223372036854775809 is outside the 64-bit range/ });
});

t.test('revision 3 URL: rowkey=, rowkey_hex= and the hbase= / hbase_hex= aliases', async (t) => {
  t.equal(rowKeyHex(parseEntityIdText('rowkey=D\\x01\\x80\\x00\\x00\\x00\\x00\\x0009', R3)), '44018000000000003039');
  t.equal(rowKeyHex(parseEntityIdText('hbase=D\\x01\\x80\\x00\\x00\\x00\\x00\\x0009', R3)), '44018000000000003039');
  t.equal(rowKeyHex(parseEntityIdText('rowkey_hex=44018000000000003039', R3)), '44018000000000003039');
  t.equal(rowKeyHex(parseEntityIdText('hbase_hex=3F0B636F6D706F6E656E743100', R3)), '3f0b636f6d706f6e656e743100');
  t.equal(rowKeyHex(parseEntityIdText('rowkey=\\xB75antipater\\x00makedonia\\x00', R3)), 'b735616e74697061746572006d616b65646f6e696100');
  t.equal(parseEntityIdText('hbase_hex=4401', R3).text, 'hbase_hex=4401');
});

t.test('revision 3 URL: bad row key forms name the input', async (t) => {
  t.throws(() => parseEntityIdText('rowkey_hex=abc', R3), { ...BAD_KEY, message: 'rowkey_hex "abc" has an odd number of hex digits (3)' });
  t.throws(() => parseEntityIdText('hbase_hex=zz', R3), { ...BAD_KEY, message: 'hbase_hex "zz" has a non-hex character "z" at position 0' });
  t.throws(() => parseEntityIdText('rowkey=a\\b', R3), { ...BAD_KEY, message: /^rowkey "a\\\\b" has a backslash at position 1/ });
  t.throws(() => parseEntityIdText('hbase=é', R3), { ...BAD_KEY, message: /^hbase "é" has the character U\+00E9/ });
  t.throws(() => parseEntityIdText('rowkey=', R3), { ...BAD_KEY, message: 'entity id "rowkey=" has an empty row key after rowkey=' });
  t.throws(() => parseEntityIdText('rowkey_hex=', R3), BAD_KEY);
});

t.test('revision 3 URL: wildcards only where allowed', async (t) => {
  t.same(components(parseEntityIdText('[[], "b", [ ]]', R3_SCAN)), [WILDCARD, 'b', WILDCARD]);
  t.throws(() => parseEntityIdText('["a", []]', R3), {
    ...NO_WILDCARD,
    message: 'entity id "[\\"a\\", []]": the wildcard [] (component 1) is not accepted here, only a complete entity id',
  });
});

t.test('revision 3 URL: rejects everything that is not an array of components', async (t) => {
  const provide = (got: string) => `Provide components wrapped as a JSON array or provide the row key (rowkey=... or rowkey_hex=...): got ${got}`;
  t.throws(() => parseEntityIdText('12345', R3), { ...BAD_EID, message: provide('"12345"') });
  t.throws(() => parseEntityIdText('"a"', R3), { ...BAD_EID, message: provide('"\\"a\\""') });
  t.throws(() => parseEntityIdText('{"a":1}', R3), { ...BAD_EID, message: provide('"{\\"a\\":1}"') });
  t.throws(() => parseEntityIdText('', R3), { ...BAD_EID, message: provide('""') });
  t.throws(() => parseEntityIdText('[]', R3_SCAN), { ...BAD_EID, message: 'entity id "[]" has no components' });
  const cases: [string, string][] = [
    ['[1.5]', 'entity id "[1.5]": components must be integers, got the number 1.5 at position 1'],
    ['[1e3]', 'entity id "[1e3]": components must be integers, got the number 1e3 at position 1'],
    ['[-2.5E-3]', 'entity id "[-2.5E-3]": components must be integers, got the number -2.5E-3 at position 1'],
    ['[true]', 'entity id "[true]": booleans are not entity id components at position 1'],
    ['[1, false]', 'entity id "[1, false]": booleans are not entity id components at position 4'],
    ['[{}]', 'entity id "[{}]": objects are not entity id components at position 1'],
    ['[[1]]', 'entity id "[[1]]": arrays inside an entity id must be empty (the wildcard []) at position 1'],
    ['[1] x', 'entity id "[1] x": unexpected text after the entity id at position 4'],
    ['[1],[2]', 'entity id "[1],[2]": unexpected text after the entity id at position 3'],
    ['[1,]', 'entity id "[1,]": unexpected character "]" (expected a string, an integer or null) at position 3'],
    ['[1 2]', 'entity id "[1 2]": expected , or ] but found "2" at position 3'],
    ['[1', 'entity id "[1": missing ] at position 2'],
    ['[1,', 'entity id "[1,": unexpected end of text at position 3'],
    ['["a\\', 'entity id "[\\"a\\\\": unknown escape \\ in a string at position 3'],
    ['["ab', 'entity id "[\\"ab": unterminated string at position 4'],
    ['["a\\qb"]', 'entity id "[\\"a\\\\qb\\"]": unknown escape \\q in a string at position 3'],
    ['["\\u12"]', 'entity id "[\\"\\\\u12\\"]": \\u must be followed by four hex digits at position 2'],
    ['["a\nb"]', 'entity id "[\\"a\\nb\\"]": control character U+000A must be escaped in a string at position 3'],
    ['[01]', 'entity id "[01]": integers cannot have leading zeros at position 1'],
    ['[-]', 'entity id "[-]": expected digits after - at position 2'],
    ['[+1]', 'entity id "[+1]": unexpected character "+" (expected a string, an integer or null) at position 1'],
    ['[abc]', 'entity id "[abc]": unexpected character "a" (expected a string, an integer or null) at position 1'],
    ['[nul]', 'entity id "[nul]": unexpected character "n" (expected a string, an integer or null) at position 1'],
  ];
  for (const [text, message] of cases) t.throws(() => parseEntityIdText(text, R3_SCAN), { ...BAD_EID, message }, text);
});

t.test('revision 1/2 shell entity ids on a FORMATTED table', async (t) => {
  const shell = (text: string, format: RowKeyFormat = PLAYERS, opts = { allowWildcards: false }) => parseShellEntityId(text, format, opts);
  t.same(components(shell("['seleukos', 'makedonia']")), ['seleukos', 'makedonia']);
  t.same(components(shell('["seleukos","makedonia"]')), ['seleukos', 'makedonia']);
  t.same(components(shell('12345', SAMPLE_TABLE)), [12345]);
  t.same(components(shell("'x'")), ['x']);
  t.same(components(shell('kiji=[12345]', SAMPLE_TABLE)), [12345]);
  t.equal(shell("['seleukos', 'makedonia']").text, "['seleukos', 'makedonia']");
  t.equal(rowKeyHex(shell('hbase=hex:44018000000000003039', SAMPLE_TABLE)), '44018000000000003039');
  t.equal(rowKeyHex(shell('hbase=D\\x01\\x80\\x00\\x00\\x00\\x00\\x0009', SAMPLE_TABLE)), '44018000000000003039');
  t.same(components(shell("[[], 'makedonia']", PLAYERS, { allowWildcards: true })), [WILDCARD, 'makedonia']);
  t.throws(() => shell("[[], 'makedonia']"), NO_WILDCARD);
  t.throws(() => shell('{"player": "x"}'), { ...BAD_EID, message: /objects are not entity id components/ });
  t.throws(() => shell('seleukos'), { ...BAD_EID, message: /unexpected character "s"/ });
  t.throws(() => shell('[1.0]', SAMPLE_TABLE), { ...BAD_EID, message: /must be integers/ });
});

t.test('revision 1/2 hbase= byte specs: hex:, url:, utf8:, plain text and escaped text', async (t) => {
  const key = (text: string) => rowKeyHex(parseShellEntityId(text, RAW));
  t.equal(key('hbase=hex:6162FF'), '6162ff');
  t.equal(key('hbase=url:%41+b%ff'), '412062ff');
  t.equal(key('hbase=utf8:a\\b'), '615c62');
  t.equal(key('hbase=alice'), '616c696365');
  t.equal(key('hbase=é'), 'c3a9');
  t.equal(key('hbase=\\x00A\\x5C'), '00415c');
  t.throws(() => key('hbase=hex:abc'), { ...BAD_KEY, message: 'hex: row key "abc" has an odd number of hex digits (3)' });
  t.throws(() => key('hbase=url:%4'), { ...BAD_KEY, message: 'entity id "hbase=url:%4": % at position 0 of the url: spec is not followed by two hex digits' });
  t.throws(() => key('hbase=a\\b'), { ...BAD_KEY, message: /^escaped row key "a\\\\b" has a backslash/ });
  t.throws(() => key('hbase='), { ...BAD_KEY, message: 'entity id "hbase=" gives an empty row key' });
});

t.test('revision 1/2 shell entity ids on RAW and hashed tables', async (t) => {
  t.equal(rowKeyHex(parseShellEntityId('alice', RAW)), '616c696365');
  t.equal(rowKeyHex(parseShellEntityId('kiji=hex:6162', RAW)), '6162');
  t.same(components(parseShellEntityId('alice', HASH)), ['alice']);
  t.same(components(parseShellEntityId('kiji=alice', HASH_PREFIX)), ['alice']);
  t.same(components(parseShellEntityId("['alice']", HASH)), ['alice']);
  t.same(components(parseShellEntityId("kiji=['alice']", HASH)), ["['alice']"], 'after kiji= the key is literal');
  t.same(components(parseShellEntityId('kiji=\\xC3\\xA9\\x5C', HASH_PREFIX)), ['é\\']);
  t.throws(() => parseShellEntityId('kiji=\\xFF', HASH), {
    ...BAD_EID,
    message: 'entity id "kiji=\\\\xFF": the kiji key of a hashed table must be UTF-8 text',
  });
  t.throws(() => parseShellEntityId('', HASH), { ...BAD_EID, message: 'entity id is empty' });
  t.same(components(parseShellEntityId('kiji=', HASH_PREFIX)), ['']);
  t.throws(() => parseShellEntityId('kiji=', RAW), { ...BAD_KEY, message: 'entity id "kiji=" gives an empty row key' });
});

t.test('revision 3 POST body entity ids', async (t) => {
  t.same(entityIdFromBody([12345]), { kind: 'components', components: [12345], text: '[12345]' });
  t.same(entityIdFromBody(['menandros', 'asia.minor']), { kind: 'components', components: ['menandros', 'asia.minor'], text: '["menandros","asia.minor"]' });
  t.same(entityIdFromBody(['a', null, 2n ** 63n - 1n, -0]), {
    kind: 'components',
    components: ['a', null, 2n ** 63n - 1n, 0],
    text: '["a",null,9223372036854775807,0]',
  });
  t.equal(rowKeyHex(entityIdFromBody('hbase_hex=44018000000000003039')), '44018000000000003039');
  t.equal(rowKeyHex(entityIdFromBody('rowkey=D\\x01\\x80\\x00\\x00\\x00\\x00\\x0009')), '44018000000000003039');
  t.equal(entityIdFromBody('rowkey_hex=4401').text, 'rowkey_hex=4401');
  const forms = 'entityId must be a JSON array of components or a string starting with rowkey=, rowkey_hex=, hbase= or hbase_hex=';
  t.throws(() => entityIdFromBody('[12345]'), { ...BAD_EID, message: `${forms}; got the string "[12345]"` });
  t.throws(() => entityIdFromBody(12345), { ...BAD_EID, message: `${forms}; got 12345` });
  t.throws(() => entityIdFromBody({ a: 1n }), { ...BAD_EID, message: `${forms}; got {"a":"1"}` });
  t.throws(() => entityIdFromBody(null), { ...BAD_EID, message: `${forms}; got null` });
  t.throws(() => entityIdFromBody([]), { ...BAD_EID, message: 'entity id [] has no components' });
  t.throws(() => entityIdFromBody([1.5]), { ...BAD_EID, message: 'entity id [1.5]: component 0 must be an exact integer, got the number 1.5' });
  t.throws(() => entityIdFromBody(['a', true]), {
    ...BAD_EID,
    message: 'entity id ["a",true]: component 1 must be a string, an integer or null, got the boolean true',
  });
  t.throws(() => entityIdFromBody([{}]), { ...BAD_EID, message: 'entity id [{}]: component 0 must be a string, an integer or null, got an object' });
  t.throws(() => entityIdFromBody([[1]]), { ...BAD_EID, message: 'entity id [[1]]: component 0 must be a string, an integer or null, got an array' });
  t.throws(() => entityIdFromBody([2n ** 63n]), {
    ...BAD_EID,
    message: 'entity id ["9223372036854775808"]: component 0 is outside the 64-bit range: 9223372036854775808',
  });
  t.throws(() => entityIdFromBody(['a', []]), {
    ...NO_WILDCARD,
    message: 'entity id ["a",[]]: component 1 is a wildcard [], which is not accepted here, only a complete entity id',
  });
  t.throws(() => entityIdFromBody('rowkey_hex=0'), BAD_KEY);
});

t.test('regression: a row key whose hash prefix is not the hash of its components is refused, naming the right key', async (t) => {
  // KijiREST's range end key 44018000000000003040 (docs/data-model.md, "Worked examples") borrows row 12345's prefix 4401;
  // as a bound it is a byte position, but as a row it would read back as [12352] and be unreachable by it.
  const canonical = encodeRowKey(SAMPLE_TABLE, [12352n]).toString('hex');
  t.not(canonical, '44018000000000003040');
  t.same(decodeRowKey(SAMPLE_TABLE, bytes('44018000000000003040')), [12352n], 'the vector decodes to [12352]');
  t.throws(() => resolveEntityId(SAMPLE_TABLE, parseEntityIdText('rowkey_hex=44018000000000003040', R3)), {
    ...BAD_KEY,
    message: `row key 44018000000000003040 does not match its entity id [12352]: that entity id's row key is ${canonical} (the hash prefix is computed from the components)`,
  });
  t.equal(resolveEntityId(SAMPLE_TABLE, parseEntityIdText(`rowkey_hex=${canonical}`, R3)).toString('hex'), canonical, 'the canonical key is accepted');
  t.throws(() => resolveEntityId(HASH_PREFIX, entityIdFromBody('rowkey_hex=0000616c696365')), {
    ...BAD_KEY,
    message: /does not match its entity id \["alice"\]: that entity id's row key is 6384616c696365/,
  });
  t.equal(resolveEntityId(HASH_PREFIX, entityIdFromBody('rowkey_hex=6384616c696365')).toString('hex'), '6384616c696365');
  t.equal(resolveEntityId(RAW, entityIdFromBody('rowkey_hex=0000616c696365')).toString('hex'), '0000616c696365', 'RAW keys have no hash to check');
});

t.test('resolveEntityId: components to row keys, LONG promoted, wildcards refused', async (t) => {
  t.equal(resolveEntityId(SAMPLE_TABLE, parseEntityIdText('[12345]', R3)).toString('hex'), '44018000000000003039');
  t.equal(resolveEntityId(SAMPLE_TABLE, parseShellEntityId('[1298404763]', SAMPLE_TABLE)).toString('hex'), '9ee9800000004d64159b');
  t.equal(resolveEntityId(PLAYERS, parseEntityIdText("['antipater']", R3)).toString('hex'), 'b735616e7469706174657200');
  t.equal(resolveEntityId(HASH, parseEntityIdText('["alice"]', R3)).toString('hex'), '6384e2b2184bcbf58eccf10ca7a6563c');
  t.equal(resolveEntityId(HASH_PREFIX, entityIdFromBody(['alice'])).toString('hex'), '6384616c696365');
  t.equal(resolveEntityId(RAW, parseEntityIdText('["alice"]', R3)).toString('hex'), '616c696365');
  t.throws(() => resolveEntityId(PLAYERS, parseEntityIdText('["a", []]', R3_SCAN)), {
    ...NO_WILDCARD,
    message: 'Entity id must be fully specified, without wildcards: "[\\"a\\", []]" has a wildcard [] at component 1',
  });
  t.throws(() => resolveEntityId(HASH, parseEntityIdText('["a", "b"]', R3)), {
    ...BAD_EID,
    message: /HASH row key takes exactly one string component, got 2 components/,
  });
  t.throws(() => resolveEntityId(SAMPLE_TABLE, parseEntityIdText('["x"]', R3)), {
    ...BAD_EID,
    message: 'component \'sequence_number\' (index 0) must be a LONG, got the string "x"',
  });
});

t.test('resolveEntityId: row keys must fit the table format', async (t) => {
  const rk = (text: string) => parseEntityIdText(text, R3);
  t.equal(resolveEntityId(SAMPLE_TABLE, rk('rowkey_hex=44018000000000003039')).toString('hex'), '44018000000000003039');
  t.throws(() => resolveEntityId(SAMPLE_TABLE, rk('rowkey_hex=4401')), { ...BAD_KEY, message: /row key 4401 is not a valid FORMATTED key/ });
  t.throws(() => resolveEntityId(PLAYERS, rk('rowkey_hex=b73561')), { ...BAD_KEY, message: /has no 0x00 terminator/ });
  t.equal(resolveEntityId(SUPPRESSED, rk('rowkey_hex=1535')).toString('hex'), '1535');
  t.throws(() => resolveEntityId(SUPPRESSED, rk('rowkey_hex=153500')), { ...BAD_KEY, message: /suppresses key materialization/ });
  t.equal(resolveEntityId(HASH, rk('rowkey_hex=6384e2b2184bcbf58eccf10ca7a6563c')).length, 16);
  t.throws(() => resolveEntityId(HASH, rk('rowkey_hex=6384')), {
    ...BAD_KEY,
    message: 'row key 6384 is not a valid HASH key: HASH keys are 16-byte MD5 digests, got 2 bytes',
  });
  t.equal(resolveEntityId(HASH_PREFIX, rk('rowkey=c\\x84alice')).toString('hex'), '6384616c696365');
  t.throws(() => resolveEntityId(HASH_PREFIX, rk('rowkey_hex=63')), BAD_KEY);
  t.equal(resolveEntityId(RAW, rk('rowkey_hex=00ff')).toString('hex'), '00ff');
  t.throws(() => resolveEntityId(RAW, { kind: 'rowKey', rowKey: Buffer.alloc(0), text: '' }), { ...BAD_KEY, message: 'row key is empty' });
});

t.test('formatEntityIdJson: revision 3 entityId per key format', async (t) => {
  t.equal(formatEntityIdJson(SAMPLE_TABLE, bytes('44018000000000003039')), '[12345]');
  t.equal(formatEntityIdJson(PLAYERS, bytes('b735616e74697061746572006d616b65646f6e696100')), '["antipater","makedonia"]');
  t.equal(formatEntityIdJson(PLAYERS, bytes('b735616e7469706174657200')), '["antipater",null]');
  t.equal(formatEntityIdJson(RKF2_FORMATTED, bytes('9dd4780061006200800000017fffffffffffffff')), '["x","a","b",1,-1]');
  t.equal(formatEntityIdJson(SAMPLE_TABLE, encodeRowKey(SAMPLE_TABLE, [-(2n ** 63n)])), '[-9223372036854775808]');
  t.equal(formatEntityIdJson(SAMPLE_TABLE, encodeRowKey(SAMPLE_TABLE, [2n ** 63n - 1n])), '[9223372036854775807]');
  t.equal(formatEntityIdJson(PLAYERS, encodeRowKey(PLAYERS, ['a"b\\\r\n', 'é'])), '["a\\"b\\\\\\r\\n","é"]');
  t.equal(formatEntityIdJson(HASH_PREFIX, bytes('6384616c696365')), '["alice"]');
  t.equal(formatEntityIdJson(RAW, Buffer.from('alice')), '"rowkey=alice"');
  t.equal(formatEntityIdJson(RAW, bytes('00415c')), '"rowkey=\\\\x00A\\\\x5C"');
  t.equal(
    formatEntityIdJson(HASH, bytes('6384e2b2184bcbf58eccf10ca7a6563c')),
    '"rowkey=c\\\\x84\\\\xE2\\\\xB2\\\\x18K\\\\xCB\\\\xF5\\\\x8E\\\\xCC\\\\xF1\\\\x0C\\\\xA7\\\\xA6V<"',
  );
  t.equal(formatEntityIdJson(SUPPRESSED, bytes('1535')), '"rowkey=\\\\x155"');
  // A key its format cannot decode (the store takes raw keys) is named by its bytes, as RAW keys are.
  t.equal(formatEntityIdJson(SAMPLE_TABLE, bytes('4401')), '"rowkey=D\\\\x01"');
});

t.test('formatShellEntityId: revision 1/2 toShellString per key format', async (t) => {
  t.equal(formatShellEntityId(SAMPLE_TABLE, bytes('44018000000000003039')), '[12345]');
  t.equal(formatShellEntityId(RKF2_FORMATTED, bytes('9dd4780061006200800000017fffffffffffffff')), "['x', 'a', 'b', 1, -1]");
  t.equal(formatShellEntityId(PLAYERS, bytes('fa5773656c65756b6f73006d616b65646f6e696100')), "['seleukos', 'makedonia']");
  t.equal(formatShellEntityId(PLAYERS, bytes('b735616e7469706174657200')), "['antipater', null]");
  t.equal(formatShellEntityId(PLAYERS, encodeRowKey(PLAYERS, ["it's", 'a"\\b\n\x01'])), "['it\\'s', 'a\\\"\\\\b\\n\\u0001']");
  t.equal(formatShellEntityId(SAMPLE_TABLE, encodeRowKey(SAMPLE_TABLE, [-(2n ** 63n)])), '[-9223372036854775808]');
  t.equal(formatShellEntityId(RAW, Buffer.from('alice')), 'hbase=alice');
  t.equal(formatShellEntityId(RAW, bytes('00415c')), 'hbase=\\x00A\\x5C');
  t.equal(formatShellEntityId(HASH, bytes('6384e2b2184bcbf58eccf10ca7a6563c')), 'hbase=hex:6384e2b2184bcbf58eccf10ca7a6563c');
  t.equal(formatShellEntityId(HASH_PREFIX, bytes('6384616c696365')), 'kiji=alice');
  t.equal(formatShellEntityId(HASH_PREFIX, encodeRowKey(HASH_PREFIX, ['é'])), 'kiji=\\xC3\\xA9');
  t.equal(formatShellEntityId(SUPPRESSED, bytes('1535')), 'hbase=hex:1535');
});

const TYPES = ['STRING', 'INTEGER', 'LONG'] as const;

function randomCase(rand: () => number): { format: RowKeyFormat; key: Buffer } {
  const pick = rand();
  if (pick < 0.1) {
    const key = randomBytes(rand, 20);
    return { format: RAW, key: key.length ? key : Buffer.from('k') };
  }
  if (pick < 0.2) return { format: HASH, key: encodeRowKey(HASH, [randomString(rand)]) };
  if (pick < 0.3) {
    const format: RowKeyFormat = { encoding: 'HASH_PREFIX', hashSize: 1 + Math.floor(rand() * 16) };
    return { format, key: encodeRowKey(format, [randomString(rand)]) };
  }
  const n = 1 + Math.floor(rand() * 4);
  const format = formatted(
    Array.from({ length: n }, (_, i) => [`c${i}`, TYPES[Math.floor(rand() * 3)]!]),
    {
      hashSize: 1 + Math.floor(rand() * 16),
      nullableStartIndex: 1 + Math.floor(rand() * n),
      rangeScanStartIndex: 1 + Math.floor(rand() * n),
    },
  );
  const given = format.nullableStartIndex + Math.floor(rand() * (n - format.nullableStartIndex + 1));
  const comps = format.components
    .slice(0, given)
    .map((s) => (s.type === 'STRING' ? randomString(rand) : s.type === 'INTEGER' ? randomInt(rand) : randomLong(rand)));
  if (rand() < 0.2) {
    const suppressed = { ...format, suppressMaterialization: true, rangeScanStartIndex: n };
    return { format: suppressed, key: encodeRowKey(suppressed, comps) };
  }
  return { format, key: encodeRowKey(format, comps) };
}

t.test('random keys: formatEntityIdJson and formatShellEntityId parse back to the same row key', async (t) => {
  const rand = prng(99);
  let failures = 0;
  for (let i = 0; i < 3000 && failures < 5; i++) {
    const { format, key } = randomCase(rand);
    const json = formatEntityIdJson(format, key);
    // The row JSON carries either an array (URL text as is) or a string whose value is the URL text.
    const urlText = json.startsWith('"') ? (JSON.parse(json) as string) : json;
    const fromJson = resolveEntityId(format, parseEntityIdText(urlText, R3));
    const fromShell = resolveEntityId(format, parseShellEntityId(formatShellEntityId(format, key), format));
    if (!fromJson.equals(key) || !fromShell.equals(key)) {
      failures++;
      t.fail(`round trip of ${key.toString('hex')} (${format.encoding}) via ${json} / ${formatShellEntityId(format, key)}`);
    }
  }
  t.equal(failures, 0);
});

t.test('formatEntityIdJson writes what componentsToJson of decodeRowKey writes, for random keys and damaged ones', async (t) => {
  // formatEntityIdJson writes FORMATTED keys straight from their bytes; the reference is the
  // general definition: the decoded components as JSON, or rowkey= when the key does not decode.
  const reference = (format: RowKeyFormat, key: Buffer): string => {
    let components: ComponentValue[] | undefined;
    try {
      components = decodeRowKey(format, key);
    } catch {
      components = undefined;
    }
    return components === undefined ? JSON.stringify(`rowkey=${toStringBinary(key)}`) : componentsToJson(components);
  };
  const rand = prng(4242);
  let compared = 0;
  for (let i = 0; i < 6000; i++) {
    const { format, key } = randomCase(rand);
    const variants = [
      key,
      key.subarray(0, Math.floor(rand() * key.length)),
      Buffer.concat([key, Buffer.from([0x80, 0xff])]),
      Buffer.from(key).fill(0xff, Math.min(2, key.length), Math.min(4, key.length)),
    ];
    for (const k of variants) {
      if (k.length === 0) continue;
      const want = reference(format, k);
      const got = formatEntityIdJson(format, k);
      if (got !== want) t.equal(got, want, `${format.encoding} ${JSON.stringify(format)} key ${k.toString('hex')}`);
      compared++;
    }
  }
  // Longs at and beyond 2^53 take the general path and stay exact.
  for (const n of [2n ** 53n - 1n, 2n ** 53n, -(2n ** 53n), -(2n ** 53n) - 1n, 2n ** 63n - 1n, -(2n ** 63n), 0n, -1n]) {
    const key = encodeRowKey(SAMPLE_TABLE, [n]);
    t.equal(formatEntityIdJson(SAMPLE_TABLE, key), `[${n}]`, `long ${n}`);
  }
  t.ok(compared > 20000, `${compared} keys compared`);
});

t.test('compileWildcard: only FORMATTED tables with materialized components', async (t) => {
  t.throws(() => compileWildcard(HASH, [WILDCARD]), {
    ...BAD_EID,
    message: "wildcard entity id [[]] needs a FORMATTED row key format, but this table's row keys are HASH and have no components to match",
  });
  t.throws(() => compileWildcard(RAW, ['a', WILDCARD]), { ...BAD_EID, message: /row keys are RAW/ });
  t.throws(() => compileWildcard(SUPPRESSED, ['x', WILDCARD]), {
    ...BAD_EID,
    message: 'wildcard entity id ["x",[]] cannot be matched: this table suppresses key materialization, so its row keys hold only a hash',
  });
  t.throws(() => compileWildcard(PLAYERS, ['a', WILDCARD, 'c']), { ...BAD_EID, message: 'entity id has 3 components but the table key has 2: ["a",[],"c"]' });
  t.throws(() => compileWildcard(PLAYERS, [null, WILDCARD]), {
    ...BAD_EID,
    message: "component 'player' (index 0) cannot be null (components before index 1 are required): [null,[]]",
  });
  t.throws(() => compileWildcard(RKF2_FORMATTED, [WILDCARD, null, 'b']), {
    ...BAD_EID,
    message: /component 'str2' \(index 2\) is not null but follows the null component at index 1/,
  });
  t.throws(() => compileWildcard(SAMPLE_TABLE, ['x']), { ...BAD_EID, message: 'component \'sequence_number\' (index 0) must be a LONG, got the string "x"' });
});

const PLAYER_KEYS: [string, string | null][] = [
  ['cassander', 'greece'],
  ['ptolemaios', 'africa.north'],
  ['antipater', 'makedonia'],
  ['antipater', null],
  ['menandros', 'asia.minor'],
  ['seleukos', 'asia.central'],
  ['seleukos', 'makedonia'],
];

t.test('compileWildcard on players: wildcards, trailing wildcards, nulls and the scan prefix', async (t) => {
  const keys = PLAYER_KEYS.map((c) => encodeRowKey(PLAYERS, c));
  const matching = (pattern: (ComponentValue | Wildcard)[]) => {
    const w = compileWildcard(PLAYERS, pattern);
    return PLAYER_KEYS.filter((_, i) => w.matches(keys[i]!)).map((c) => c.join('/'));
  };
  t.same(matching([WILDCARD, 'makedonia']), ['antipater/makedonia', 'seleukos/makedonia']);
  t.same(matching(['seleukos', WILDCARD]), ['seleukos/asia.central', 'seleukos/makedonia']);
  t.same(matching(['seleukos']), ['seleukos/asia.central', 'seleukos/makedonia']);
  t.same(matching(['antipater', null]), ['antipater/']);
  t.same(matching(['antipater', WILDCARD]), ['antipater/makedonia', 'antipater/']);
  t.same(matching([WILDCARD, WILDCARD]).length, 7);
  t.same(matching([]).length, 7);
  t.same(matching([WILDCARD, 'nowhere']), []);
  t.equal(compileWildcard(PLAYERS, ['seleukos', WILDCARD]).prefix?.toString('hex'), 'fa5773656c65756b6f7300');
  t.equal(compileWildcard(PLAYERS, ['antipater', null]).prefix?.toString('hex'), 'b735616e7469706174657200');
  t.equal(compileWildcard(PLAYERS, [WILDCARD, 'makedonia']).prefix, undefined);
  t.equal(compileWildcard(PLAYERS, []).prefix, undefined);
});

t.test('compileWildcard: the prefix needs every hashed component', async (t) => {
  t.equal(compileWildcard(F3, ['one', WILDCARD]).prefix, undefined);
  t.equal(compileWildcard(F3, ['one', 1, WILDCARD]).prefix?.toString('hex'), 'c4a86f6e650080000001');
  t.equal(compileWildcard(F3, ['one', 1, 7]).prefix?.toString('hex'), 'c4a86f6e6500800000018000000000000007');
  const w = compileWildcard(F3, ['one', WILDCARD, 7]);
  t.ok(w.matches(encodeRowKey(F3, ['one', 1, 7])));
  t.ok(w.matches(encodeRowKey(F3, ['one', -5, 7])));
  t.notOk(w.matches(encodeRowKey(F3, ['one', 1, 8])));
  t.notOk(w.matches(encodeRowKey(F3, ['one', 1])));
  t.notOk(w.matches(encodeRowKey(F3, ['onex', 1, 7])));
  t.notOk(w.matches(bytes('c4a86f6e65')), 'a malformed key without terminator never matches');
  t.equal(compileWildcard(SAMPLE_TABLE, [12345]).prefix?.toString('hex'), '44018000000000003039');
});

t.test('random wildcard patterns match exactly the keys whose components agree', async (t) => {
  const rand = prng(4242);
  const format = formatted(
    [
      ['a', 'STRING'],
      ['b', 'INTEGER'],
      ['c', 'LONG'],
      ['d', 'STRING'],
    ],
    { rangeScanStartIndex: 2, nullableStartIndex: 2 },
  );
  const small = (type: string): ComponentValue =>
    type === 'STRING' ? ['', 'a', 'ab', 'é'][Math.floor(rand() * 4)]! : type === 'INTEGER' ? Math.floor(rand() * 3) - 1 : BigInt(Math.floor(rand() * 3) - 1);
  const rows: ComponentValue[][] = [];
  for (let i = 0; i < 200; i++) {
    const n = 2 + Math.floor(rand() * 3);
    rows.push(format.components.map((s, j) => (j < n ? small(s.type) : null)));
  }
  const keys = rows.map((r) => encodeRowKey(format, r));
  let bad = 0;
  for (let p = 0; p < 300; p++) {
    const pattern: (ComponentValue | Wildcard)[] = [];
    const len = Math.floor(rand() * 5);
    let nulled = false;
    for (let j = 0; j < len; j++) {
      const r = rand();
      if (nulled) pattern.push(r < 0.5 ? null : WILDCARD);
      else if (r < 0.4) pattern.push(WILDCARD);
      else if (r < 0.5 && j >= 2) {
        pattern.push(null);
        nulled = true;
      } else pattern.push(small(format.components[j]!.type));
    }
    const w = compileWildcard(format, pattern);
    rows.forEach((row, i) => {
      const want = pattern.every((c, j) => c === WILDCARD || (c === null ? row[j] === null : c === row[j]));
      if (w.matches(keys[i]!) !== want) bad++;
      if (want && w.prefix && !keys[i]!.subarray(0, w.prefix.length).equals(w.prefix)) bad++;
    });
    // Every row that decodes to a match must be found: cross-check with decodeRowKey.
    t.ok(rows.every((row, i) => String(decodeRowKey(format, keys[i]!)) === String(row)));
  }
  t.equal(bad, 0);
});
