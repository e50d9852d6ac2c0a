import { createHash, randomBytes } from 'node:crypto';
import t from 'tap';
import { MD5_SHORT_MAX, md5ShortInto } from '../../lib/model/keys/md5-short.js';
import { md5Into } from '../../lib/model/keys/row-key.js';

const md5 = (data: Uint8Array): Buffer => createHash('md5').update(data).digest();

t.test('md5ShortInto gives node crypto digests for every length 0-55, at any offset', async (t) => {
  let mismatches = 0;
  for (let length = 0; length <= MD5_SHORT_MAX; length++) {
    for (let round = 0; round < 50; round++) {
      const offset = round % 7;
      const data = randomBytes(offset + length + 3);
      const target = Buffer.alloc(16);
      md5ShortInto(target, 16, data, offset, offset + length);
      if (!target.equals(md5(data.subarray(offset, offset + length)))) mismatches++;
    }
  }
  t.equal(mismatches, 0);
});

t.test('md5ShortInto: RFC 1321 A.5 test suite vectors', async (t) => {
  const vectors: [string, string][] = [
    ['', 'd41d8cd98f00b204e9800998ecf8427e'],
    ['a', '0cc175b9c0f1b6a831c399e269772661'],
    ['abc', '900150983cd24fb0d6963f7d28e17f72'],
    ['message digest', 'f96b697d7cb7938d525a2f31aaf161d0'],
    ['abcdefghijklmnopqrstuvwxyz', 'c3fcd3d76192e4007dfb496cca67e13b'],
  ];
  for (const [text, digest] of vectors) {
    const data = Buffer.from(text, 'latin1');
    const target = Buffer.alloc(16);
    md5ShortInto(target, 16, data, 0, data.length);
    t.equal(target.toString('hex'), digest, JSON.stringify(text));
  }
});

t.test('md5ShortInto writes only the first count bytes, and may write into its own input', async (t) => {
  const key = Buffer.from('0011' + '8000000000bc614e', 'hex');
  const expected = md5(key.subarray(2));
  md5ShortInto(key, 2, key, 2, key.length);
  t.equal(key.subarray(0, 2).toString('hex'), expected.subarray(0, 2).toString('hex'));
  t.equal(key.subarray(2).toString('hex'), '8000000000bc614e', 'the hashed bytes are left as they were');
});

t.test('md5Into hands inputs longer than one block to node crypto, with the same answer', async (t) => {
  for (const length of [MD5_SHORT_MAX, MD5_SHORT_MAX + 1, 64, 65, 200]) {
    const data = randomBytes(length + 4);
    const target = Buffer.alloc(8);
    md5Into(target, 8, data, 4, 4 + length);
    t.equal(target.toString('hex'), md5(data.subarray(4)).subarray(0, 8).toString('hex'), `${length} bytes`);
  }
});
