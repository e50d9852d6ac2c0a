/** lib/model/json/plain-string.ts: a quoted text without a backslash is its own value; anything else is left to JSON.parse. */
import t from 'tap';
import { isPlainStringBytes, plainString } from '../../lib/model/json/plain-string.js';

t.test('plainString reads escape-free JSON strings and declines everything else', async (t) => {
  for (const value of ['', 'a', 'plain text', 'café € \u{1F600}', "it's"]) t.equal(plainString(JSON.stringify(value)), value, JSON.stringify(value));
  for (const json of ['"a\\"b"', '"\\u00e9"', '"back\\\\slash"', '5', 'null', '"', '', '["a"]', '"unterminated', 'x"']) {
    t.equal(plainString(json), undefined, `${json}: left to JSON.parse`);
  }
});

t.test('isPlainStringBytes: the bytes between the quotes are the value’s UTF-8 exactly when plainString reads the text', async (t) => {
  const texts = ['""', '"a"', '"café € \u{1F600}"', '"a\\"b"', '"\\u00e9"', '5', 'null', '"', '', '["a"]', '"unterminated', 'x"'];
  for (const json of texts) {
    // Inside a larger buffer, as a stored row holds it.
    const b = Buffer.from(`xx${json}yy`);
    const plain = isPlainStringBytes(b, 2, 2 + Buffer.byteLength(json));
    const value = plainString(json);
    t.equal(plain, value !== undefined, `${json}: plain as the string reader says`);
    if (plain) t.equal(b.toString('utf8', 3, 1 + Buffer.byteLength(json)), value, `${json}: its bytes`);
  }
});
