import t, { type Test } from 'tap';
import { MAX_JSON_DEPTH, parseExactJson, stringifyExactJson } from '../../lib/model/json/exact-json.js';
import type { JsonValue } from '../../lib/model/types.js';

function badBody(t: Test, text: string, pattern: RegExp) {
  t.throws(() => parseExactJson(text, 'request body'), { code: 'RG_ERR_BAD_BODY', message: pattern }, text.slice(0, 40));
}

t.test('integers beyond the safe range parse as exact bigints', async (t) => {
  t.equal(parseExactJson('9223372036854775807', 'x'), 9223372036854775807n);
  t.equal(parseExactJson('-9223372036854775808', 'x'), -9223372036854775808n);
  t.same(parseExactJson('{"a":[9007199254740993]}', 'x'), { a: [9007199254740993n] });
  t.equal(parseExactJson('123456789012345678901234567890', 'x'), 123456789012345678901234567890n);
});

t.test('a 16+ digit run in a string or a fraction does not change the value', async (t) => {
  t.same(parseExactJson('["12345678901234567890", 0.12345678901234567]', 'x'), ['12345678901234567890', 0.12345678901234567]);
});

t.test('safe integers stay numbers even on the exact path', async (t) => {
  t.equal(parseExactJson('9007199254740991', 'x'), 9007199254740991);
  t.equal(parseExactJson('-9007199254740991', 'x'), -9007199254740991);
  t.same(parseExactJson('[1234567890123456, 1, 9007199254740993]', 'x'), [1234567890123456, 1, 9007199254740993n]);
});

t.test('fractions and exponents are numbers on both paths', async (t) => {
  t.equal(parseExactJson('1.5', 'x'), 1.5);
  t.equal(parseExactJson('12345678901234567.5', 'x'), 12345678901234567.5);
  t.equal(parseExactJson('1e20', 'x'), 1e20);
  t.same(parseExactJson('[1E-2, "1234567890123456789"]', 'x'), [0.01, '1234567890123456789']);
});

t.test('the exact parser agrees with JSON.parse on ordinary documents', async (t) => {
  const docs = [
    '{"a":1,"b":[true,false,null],"c":{"d":"e\\n\\u00e9\\ud83d\\ude00"},"e":-0.5e3}',
    ' [ ] ',
    '{}',
    '"\\"\\\\\\/\\b\\f\\n\\r\\t"',
    '[0, -0, 10, 1.25, 3e2]',
  ];
  for (const doc of docs) {
    // An unsafe integer forces the exact path without changing the rest.
    const exact = parseExactJson(`[${doc}, 12345678901234567890]`, 'x') as JsonValue[];
    t.same(exact, [JSON.parse(doc), 12345678901234567890n], doc);
  }
});

t.test('"__proto__" keys become own properties, never the prototype', async (t) => {
  for (const text of ['{"__proto__": {"x": 1}}', '{"__proto__": {"x": 1}, "n": 1234567890123456789}']) {
    const v = parseExactJson(text, 'x') as Record<string, JsonValue>;
    t.equal(Object.getPrototypeOf(v), Object.prototype, text);
    t.ok(Object.prototype.hasOwnProperty.call(v, '__proto__'), text);
    t.equal((v as { x?: unknown }).x, undefined, text);
  }
});

t.test('syntax errors are RG_ERR_BAD_BODY naming the input and the position', async (t) => {
  badBody(t, '{"a":}', /^request body is not valid JSON: unexpected character "}" at position 5$/);
  badBody(t, '{"a":1', /at position 6$/);
  badBody(t, '[1,]', /unexpected character "]" at position 3/);
  badBody(t, '[1 2]', /expected ',' or ']' at position 3/);
  badBody(t, '{a:1}', /expected a property name at position 1/);
  badBody(t, "{'a':1}", /expected a property name at position 1/);
  badBody(t, '{"a" 1}', /expected ':' at position 5/);
  badBody(t, '"abc', /unterminated string/);
  badBody(t, '"a\tb"', /control character in string at position 2/);
  badBody(t, '"\\x"', /bad escape at position 1/);
  badBody(t, '"\\u12G4"', /bad \\u escape/);
  badBody(t, '01', /unexpected text after the JSON value at position 1/);
  badBody(t, '1.', /bad number at position 2/);
  badBody(t, '-', /bad number at position 1/);
  badBody(t, '1e+', /bad number at position 3/);
  badBody(t, 'tru', /unexpected character "t" at position 0/);
  badBody(t, 'NaN', /unexpected character "N"/);
  badBody(t, '', /unexpected end of input at position 0/);
  badBody(t, '[1] x', /unexpected text after the JSON value at position 4/);
  badBody(t, '\ufeff{}', /unexpected character/);
  // The same errors on the exact path.
  badBody(t, '[12345678901234567890,]', /unexpected character "]" at position 22/);
  t.throws(() => parseExactJson('{', 'eid'), { message: /^eid is not valid JSON/ });
});

t.test('nesting deeper than the limit is refused on both paths', async (t) => {
  const ok = '['.repeat(MAX_JSON_DEPTH) + ']'.repeat(MAX_JSON_DEPTH);
  t.equal(Array.isArray(parseExactJson(ok, 'x')), true);
  const deep = '['.repeat(MAX_JSON_DEPTH + 1) + ']'.repeat(MAX_JSON_DEPTH + 1);
  badBody(t, deep, new RegExp(`nested deeper than ${MAX_JSON_DEPTH} levels at position ${MAX_JSON_DEPTH}`));
  badBody(t, `[12345678901234567,${'{"a":'.repeat(600)}1${'}'.repeat(600)}]`, /nested deeper than/);
  // Brackets inside strings do not count.
  const inString = JSON.stringify({ s: '['.repeat(2000) + '\\"' });
  t.same(parseExactJson(inString, 'x'), JSON.parse(inString));
});

t.test('stringify prints bigints exactly and otherwise equals JSON.stringify', async (t) => {
  t.equal(stringifyExactJson({ a: 9223372036854775807n, b: [-9223372036854775808n, 1, 'x'] }), '{"a":9223372036854775807,"b":[-9223372036854775808,1,"x"]}');
  const plain = { a: 'line\r\nbreak', b: [1.5, null, true], c: { d: '\u2028\u0000' } };
  t.equal(stringifyExactJson(plain), JSON.stringify(plain));
  t.equal(stringifyExactJson({ s: 'a\r\nb', n: 1n }), '{"s":"a\\r\\nb","n":1}');
  t.notMatch(stringifyExactJson({ s: '\r\n', n: 1n }), /\r|\n/);
});

t.test('random documents round-trip exactly through stringify and parse', async (t) => {
  let seed = 12345;
  const rnd = () => (seed = (seed * 1103515245 + 12345) % 2147483648) / 2147483648;
  const gen = (depth: number): JsonValue => {
    const k = Math.floor(rnd() * (depth > 3 ? 6 : 8));
    switch (k) {
      case 0:
        return null;
      case 1:
        return rnd() < 0.5;
      case 2:
        return Math.floor((rnd() - 0.5) * 1e6);
      case 3:
        return BigInt.asIntN(64, BigInt(Math.floor(rnd() * 2 ** 31)) * 2n ** 33n + 2n ** 53n + 1n);
      case 4:
        return (rnd() - 0.5) * 1e3;
      case 5:
        return String.fromCharCode(...Array.from({ length: 5 }, () => Math.floor(rnd() * 0x3000)));
      case 6:
        return Array.from({ length: Math.floor(rnd() * 4) }, () => gen(depth + 1));
      default: {
        const o: Record<string, JsonValue> = {};
        for (let i = 0; i < 3; i++) o[`k${Math.floor(rnd() * 10)}`] = gen(depth + 1);
        return o;
      }
    }
  };
  for (let i = 0; i < 300; i++) {
    const v = gen(0);
    const text = stringifyExactJson(v);
    t.same(parseExactJson(text, 'x'), v, text);
    if (t.passing() === false) break;
  }
});

t.test('a key repeated in one object is refused naming it and its position, on both paths', async (t) => {
  const twice = (key: string, at: number) =>
    new RegExp(
      `^request body has the key ${JSON.stringify(key).replace(/[\\^$.*+?()[\]{}|]/g, '\\$&')} twice in one object, again at position ${at}: a key may appear only once$`,
    );
  badBody(t, '{"a":1,"a":2}', twice('a', 7));
  badBody(t, '{"a":1, "b":{"c":1,"c":{}}}', twice('c', 19));
  badBody(t, '[{"x":[{"v":1, "v" :2}]}]', twice('v', 15));
  badBody(t, '{"a":1,"a":2,"n":12345678901234567890}', twice('a', 7)); // the exact path (a bigint) too
  badBody(t, '{"a":1,"\\u0061":2}', twice('a', 7)); // the same key however it is escaped
  badBody(t, '{"__proto__":1,"__proto__":2}', twice('__proto__', 15));
  badBody(t, '{"a":{},"a":[]}', twice('a', 8));
  // The position counts from where the text sits in a larger document (a row of a body).
  t.throws(() => parseExactJson('{"a":1,"a":2}', 'request body', { offset: 100, depth: 1 }), { message: /again at position 107:/ });
  // Keys that only look alike, or colons and quotes inside strings, are not repeats.
  for (const text of [
    '{"a":1,"A":2,"a ":3,"b":{"a":4}}',
    '[{"a":1},{"a":2}]',
    '{"a":"x:y","b":"\\":","c":["d:", {"e":"\\\\"}], "f\\"":1, "f":2}',
    '{"1":1,"01":2,"":3}',
  ]) {
    t.same(parseExactJson(text, 'x'), JSON.parse(text), text);
  }
});
