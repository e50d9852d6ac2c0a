/**
 * The body splitter: cutting a document into its rows at any piece boundaries gives the values, or
 * the error, that parsing the whole document at once gives (parseExactJson with the same places).
 */
import t from 'tap';
import { MAX_JSON_DEPTH, parseExactJson } from '../../lib/model/json/exact-json.js';
import { JsonElementSplitter } from '../../lib/model/json/json-elements.js';
import type { JsonValue } from '../../lib/model/types.js';

type Outcome = { values: JsonValue[] } | { error: string };

function split(text: string, size: number): Outcome {
  const s = new JsonElementSplitter('request body');
  const values: JsonValue[] = [];
  try {
    for (let i = 0; i < text.length; i += size) values.push(...s.push(text.slice(i, i + size)));
    values.push(...s.end());
    return { values };
  } catch (e) {
    return { error: `${(e as { code: string }).code}: ${(e as Error).message}` };
  }
}

/** The whole document parsed at once: an array's elements, or the one value. */
function whole(text: string): Outcome {
  if (text.trim() === '') return { error: 'RG_ERR_BAD_BODY: request body is empty: expected a row object or an array of rows' };
  try {
    const v = parseExactJson(text, 'request body');
    return { values: Array.isArray(v) ? v : [v] };
  } catch (e) {
    return { error: `${(e as { code: string }).code}: ${(e as Error).message}` };
  }
}

const SIZES = [1, 2, 3, 7, 64, 4096];

const VALID = [
  '[]',
  ' [ ] ',
  '{}',
  '{"entityId":[1],"cells":{"f":{"q":[{"value":"a\\"b\\\\","timestamp":5}]}}}',
  '[{"a":1},{"b":[1,2,{"c":"]}"}]}, {"d":"\\\\"}]',
  '[1, -2.5e3, true, false, null, "x\\"y", "\\\\", "\\u005c\\"", [], {}]',
  '"just a string"',
  '12345678901234567890',
  '[9223372036854775807, {"v": -9223372036854775808}]',
  '{"__proto__": {"x": 1}, "a": [{"__proto__": 2}]}',
  '\n[\r\n\t{"a":"\u00e9\ud83d\ude00"}\n]\n',
  `[${'['.repeat(MAX_JSON_DEPTH - 1)}${']'.repeat(MAX_JSON_DEPTH - 1)}]`,
];

const INVALID = [
  '',
  '   ',
  '[',
  '[1,',
  '[1,]',
  '[,1]',
  '[1 2]',
  '[1]x',
  '[1] [2]',
  '{"a":1}}',
  '{"a":1',
  '[{"a":1]',
  '[{"a":"unterminated}]',
  '["a\\"]',
  '[tru]',
  '[nul, 1]',
  '[01]',
  '[1.]',
  '[-]',
  '[+1]',
  '["\u0001"]',
  '\ufeff[1]',
  '[1}',
  '}',
  ']',
  '[{"a":1},]',
  '[{"a":1} {"b":2}]',
  '{"a":1} x',
  '["\\x"]',
  `[${'['.repeat(MAX_JSON_DEPTH)}${']'.repeat(MAX_JSON_DEPTH)}]`,
  `[${'{"a":'.repeat(600)}1${'}'.repeat(600)}]`,
  `${'['.repeat(60_000)}`,
];

t.test('valid documents: the same values as one parse, at every piece size', async (t) => {
  for (const text of VALID) {
    const expected = whole(text);
    t.ok('values' in expected, `valid: ${text.slice(0, 60)}`);
    for (const size of SIZES) t.same(split(text, size), expected, `${JSON.stringify(text.slice(0, 60))} in pieces of ${size}`);
  }
  // Own "__proto__" properties, never prototypes.
  const [v] = (split(VALID[9]!, 1) as { values: JsonValue[] }).values as Record<string, JsonValue>[];
  t.same(Object.keys(v!), ['__proto__', 'a']);
  t.equal(Object.getPrototypeOf(v), Object.prototype);
});

t.test('invalid documents: the same error as one parse, at every piece size', async (t) => {
  for (const text of INVALID) {
    const expected = whole(text);
    t.ok('error' in expected, `invalid: ${text.slice(0, 60)}`);
    const first = split(text, text.length || 1);
    t.match(first, { error: /^RG_ERR_BAD_BODY: request body (is not valid JSON: .* at position \d+|is empty: .*)$/ }, JSON.stringify(text.slice(0, 60)));
    for (const size of SIZES) t.same(split(text, size), first, `${JSON.stringify(text.slice(0, 60))} in pieces of ${size}`);
  }
});

t.test('errors name the position in the whole document', async (t) => {
  t.same(split('[{"a":1}, {"a":}]', 3), { error: 'RG_ERR_BAD_BODY: request body is not valid JSON: unexpected character "}" at position 15' });
  t.same(split('[{"a":1} {"b":2}]', 5), { error: "RG_ERR_BAD_BODY: request body is not valid JSON: expected ',' or ']' after row 0 at position 9" });
  t.same(split('[1,\n]', 1), { error: 'RG_ERR_BAD_BODY: request body is not valid JSON: unexpected character "]" at position 4' });
  t.same(split('[{"a":1}', 2), { error: "RG_ERR_BAD_BODY: request body is not valid JSON: unexpected end of input: expected ',' or ']' at position 8" });
  t.match(split(`[${'['.repeat(MAX_JSON_DEPTH)}]`, 7), { error: new RegExp(`nested deeper than ${MAX_JSON_DEPTH} levels at position ${MAX_JSON_DEPTH}$`) });
});

t.test('a key repeated in one object: the same refusal at every piece size, positioned in the whole document', async (t) => {
  const text = '[{"entityId":[1],"cells":{}}, {"entityId":[2],"cells":{"info":{"a":[]},"info":{"b":[]}}}]';
  const expected = 'RG_ERR_BAD_BODY: request body has the key "info" twice in one object, again at position 71: a key may appear only once';
  t.same(whole(text), { error: expected });
  for (const size of SIZES) t.same(split(text, size), { error: expected }, `in pieces of ${size}`);
});

t.test('random documents cut at random places', async (t) => {
  let seed = 7;
  const rnd = (n: number): number => {
    seed = (seed * 1103515245 + 12345) % 2147483648;
    return seed % n;
  };
  const atoms = ['1', '-0.5', 'true', 'null', '"a"', '"\\\\"', '"\\""', '"]}"', '"\\u0022"', '{}', '[]'];
  const value = (d: number): string => {
    const k = rnd(d > 3 ? 1 : 3);
    if (k === 0) return atoms[rnd(atoms.length)]!;
    const n = rnd(4);
    const items = Array.from({ length: n }, (_, i) => (k === 1 ? value(d + 1) : `"k${i}\\\\":${value(d + 1)}`));
    return k === 1 ? `[${items.join(', ')}]` : `{${items.join(',')}}`;
  };
  for (let round = 0; round < 300; round++) {
    let text = `[${Array.from({ length: rnd(5) }, () => value(0)).join(',')}]`;
    // Every third document is broken by deleting one character.
    if (round % 3 === 0 && text.length > 2) {
      const at = rnd(text.length);
      text = text.slice(0, at) + text.slice(at + 1);
    }
    const expected = whole(text);
    const size = 1 + rnd(12);
    const got = split(text, size);
    if ('values' in expected) t.same(got, expected, `${text} in pieces of ${size}`);
    else t.ok('error' in got, `${text} in pieces of ${size}: refused`);
  }
});
