/** lib/model/json/plain-string.ts: a quoted text without a backslash is its own value; anything else is left to JSON.parse. */
import t from 'tap';
import { plainString } from '../../lib/model/json/plain-string.js';

t.test('plainString reads escape-free JSON strings and declines everything else', async (t) => {
  for (const value of ['', 'a', 'plain text', 'café € \u{1F600}', "it's"]) t.equal(plainString(JSON.stringify(value)), value, JSON.stringify(value));
  for (const json of ['"a\\"b"', '"\\u00e9"', '"back\\\\slash"', '5', 'null', '"', '', '["a"]', '"unterminated', 'x"']) {
    t.equal(plainString(json), undefined, `${json}: left to JSON.parse`);
  }
});
