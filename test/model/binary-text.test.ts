import t from 'tap';
import { fromHex, fromStringBinary, toHex, toStringBinary } from '../../lib/model/keys/binary-text.js';
import { prng, randomBytes } from './key-fixtures.js';

const hex = (h: string) => Buffer.from(h.replace(/ /g, ''), 'hex');

t.test('toHex writes lowercase hex, fromHex reads either case', async (t) => {
  t.equal(toHex(hex('9dd4 7800 ff')), '9dd47800ff');
  t.equal(toHex(new Uint8Array([0xab, 0x01])), 'ab01');
  t.same(fromHex('9DD4780aBc', 'rowkey_hex'), hex('9dd4780abc'));
  t.same(fromHex('', 'rowkey_hex'), Buffer.alloc(0));
});

t.test('fromHex rejects odd length and non-hex characters, naming the input', async (t) => {
  t.throws(() => fromHex('abc', 'rowkey_hex'), { code: 'RG_ERR_BAD_ROW_KEY', message: 'rowkey_hex "abc" has an odd number of hex digits (3)' });
  t.throws(() => fromHex('ab0g', 'start_rk'), { code: 'RG_ERR_BAD_ROW_KEY', message: 'start_rk "ab0g" has a non-hex character "g" at position 3' });
  t.throws(() => fromHex('0x12', 'rowkey_hex'), { code: 'RG_ERR_BAD_ROW_KEY', message: /position 1/ });
});

t.test('toStringBinary matches the HBase example and the reference keys', async (t) => {
  t.equal(toStringBinary(hex('00 41 5c 7f ff 20')), '\\x00A\\x5C\\x7F\\xFF ');
  t.equal(toStringBinary(hex('34b9800000000000002a')), '4\\xB9\\x80\\x00\\x00\\x00\\x00\\x00\\x00*');
  t.equal(toStringBinary(hex('bd5f7fffffffffffffff')), '\\xBD_\\x7F\\xFF\\xFF\\xFF\\xFF\\xFF\\xFF\\xFF');
  t.equal(toStringBinary(hex('c4a86f6e6500800000018000000000000007')), '\\xC4\\xA8one\\x00\\x80\\x00\\x00\\x01\\x80\\x00\\x00\\x00\\x00\\x00\\x00\\x07');
  t.equal(toStringBinary(hex('1535')), '\\x155');
  t.equal(toStringBinary(hex('6384616c696365')), 'c\\x84alice');
  t.equal(toStringBinary(hex('44018000000000003039')), 'D\\x01\\x80\\x00\\x00\\x00\\x00\\x0009');
  t.equal(toStringBinary(hex('b735616e74697061746572006d616b65646f6e696100')), '\\xB75antipater\\x00makedonia\\x00');
  t.equal(
    toStringBinary(hex('3f0b636f6d706f6e656e743100636f6d706f6e656e743200636f6d706f6e656e7433008000007b8000000000000141')),
    '?\\x0Bcomponent1\\x00component2\\x00component3\\x00\\x80\\x00\\x00{\\x80\\x00\\x00\\x00\\x00\\x00\\x01A',
  );
  t.equal(toStringBinary(Buffer.from('é')), '\\xC3\\xA9');
  t.equal(toStringBinary(Buffer.alloc(0)), '');
});

t.test('toStringBinary keeps exactly 0x20-0x7E except the backslash', async (t) => {
  for (let b = 0; b < 256; b++) {
    const s = toStringBinary(Buffer.from([b]));
    if (b >= 0x20 && b <= 0x7e && b !== 0x5c) t.equal(s, String.fromCharCode(b));
    else t.equal(s, `\\x${b.toString(16).toUpperCase().padStart(2, '0')}`);
  }
});

t.test('fromStringBinary parses the reference escaped keys', async (t) => {
  t.same(fromStringBinary('\\x9D\\xD4x\\x00a\\x00'), hex('9dd4 7800 6100'));
  t.same(fromStringBinary('D\\x01\\x80\\x00\\x00\\x00\\x00\\x0009'), hex('44018000000000003039'));
  t.same(fromStringBinary('\\xB75antipater\\x00makedonia\\x00'), hex('b735616e74697061746572006d616b65646f6e696100'));
  t.same(
    fromStringBinary('?\\x0Bcomponent1\\x00component2\\x00component3\\x00\\x80\\x00\\x00{\\x80\\x00\\x00\\x00\\x00\\x00\\x01A'),
    hex('3f0b636f6d706f6e656e743100636f6d706f6e656e743200636f6d706f6e656e7433008000007b8000000000000141'),
  );
  t.same(fromStringBinary('\\x00A\\x5C\\x7F\\xFF '), hex('00 41 5c 7f ff 20'));
});

t.test('fromStringBinary accepts lowercase hex digits (HBase would lose the backslash)', async (t) => {
  t.same(fromStringBinary('\\x9d\\xfF'), hex('9d ff'));
});

t.test('fromStringBinary rejects a backslash that does not start \\xHH', async (t) => {
  const bad = { code: 'RG_ERR_BAD_ROW_KEY' };
  t.throws(() => fromStringBinary('a\\b'), {
    ...bad,
    message: 'row key "a\\\\b" has a backslash at position 1 that does not start an escape \\xHH (write a backslash as \\x5C)',
  });
  t.throws(() => fromStringBinary('ab\\x4'), { ...bad, message: /backslash at position 2/ });
  t.throws(() => fromStringBinary('\\x4g'), { ...bad, message: /position 0/ });
  t.throws(() => fromStringBinary('\\X41'), bad);
  t.throws(() => fromStringBinary('abc\\', 'rowkey'), { ...bad, message: /^rowkey "abc\\\\" has a backslash at position 3/ });
});

t.test('fromStringBinary rejects unescaped characters outside 0x20-0x7E', async (t) => {
  t.throws(() => fromStringBinary('caf\u00e9'), {
    code: 'RG_ERR_BAD_ROW_KEY',
    message: 'row key "café" has the character U+00E9 at position 3: bytes outside printable ASCII must be escaped as \\xHH',
  });
  t.throws(() => fromStringBinary('€'), { message: /U\+20AC at position 0/ });
  t.throws(() => fromStringBinary('a\nb'), { message: /U\+000A at position 1/ });
  t.throws(() => fromStringBinary('\x7f'), { message: /U\+007F/ });
  t.throws(() => fromStringBinary('😀'), { message: /U\+1F600/ });
});

t.test('toStringBinary -> fromStringBinary round trip holds for random byte arrays', async (t) => {
  const rand = prng(20240601);
  for (let i = 0; i < 2000; i++) {
    const b = randomBytes(rand, 40);
    const back = fromStringBinary(toStringBinary(b));
    if (!back.equals(b)) t.fail(`round trip failed for ${b.toString('hex')}`);
    if (fromHex(toHex(b), 'hex').compare(b) !== 0) t.fail(`hex round trip failed for ${b.toString('hex')}`);
  }
  const all = Buffer.from(Array.from({ length: 256 }, (_, i) => i));
  t.same(fromStringBinary(toStringBinary(all)), all);
});
