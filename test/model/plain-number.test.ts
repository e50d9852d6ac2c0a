/**
 * lib/model/json/plain-number.ts: a plain number's bytes read to the value Number() gives its
 * text, and NaN ("read the text") for everything that is not plain; checked over fixed edge cases
 * and generated decimals against Number() itself.
 */
import t from 'tap';
import { plainDecimal, plainInteger } from '../../lib/model/json/plain-number.js';

/** The text inside a larger buffer, as a stored row holds it. */
function bytesOf(text: string): [Buffer, number, number] {
  return [Buffer.from(`[${text},`), 1, 1 + text.length];
}

const same = (a: number, b: number): boolean => Object.is(a, b);

t.test('plainInteger: plain integers of up to maxDigits digits, NaN for the rest', async (t) => {
  for (const text of ['0', '-0', '7', '-7', '123456789', '-999999999', '999999999999999', '-900719925474099']) {
    const [b, s, e] = bytesOf(text);
    t.ok(same(plainInteger(b, s, e, 15), Number(text)), `${text}`);
  }
  for (const text of ['', '-', '01', '-01', '1.5', '1e3', '+1', ' 1', '1 ', 'null', '"1"', '1234567890123456', '--1']) {
    const [b, s, e] = bytesOf(text);
    t.ok(Number.isNaN(plainInteger(b, s, e, 15)), `${JSON.stringify(text)}: not plain`);
  }
  const [b, s, e] = bytesOf('1234567890');
  t.ok(Number.isNaN(plainInteger(b, s, e, 9)), 'more digits than asked for: not plain');
  t.equal(plainInteger(b, s, e, 10), 1234567890);
});

t.test('plainDecimal: the double Number() reads, NaN where the text has an exponent or over 15 digits', async (t) => {
  for (const text of [
    '0',
    '-0',
    '0.0',
    '-0.0',
    '0.125',
    '-3.5',
    '1.1',
    '0.1',
    '0.3',
    '123456789.12345',
    '-0.00000000000001',
    '999999999999999',
    '9007199254740.99',
  ]) {
    const [b, s, e] = bytesOf(text);
    t.ok(same(plainDecimal(b, s, e), Number(text)), `${text}`);
  }
  for (const text of ['', '-', '.5', '5.', '1e5', '1E-3', '1.5e300', '00.5', '-01', '1.2.3', '1234567890123456', '0.1234567890123456', 'NaN', 'null', '+1']) {
    const [b, s, e] = bytesOf(text);
    t.ok(Number.isNaN(plainDecimal(b, s, e)), `${JSON.stringify(text)}: not plain`);
  }
});

t.test('plainDecimal agrees with Number() on 200,000 generated decimals of 1 to 15 digits', async (t) => {
  // A small linear congruential generator: the same cases every run.
  let seed = 12345;
  const next = (n: number): number => {
    seed = (seed * 1103515245 + 12345) % 2147483648;
    return seed % n;
  };
  let wrong = 0;
  let first = '';
  for (let i = 0; i < 200_000; i++) {
    const digits = 1 + next(15);
    let text = String(1 + next(9));
    for (let d = 1; d < digits; d++) text += String(next(10));
    const dot = next(digits + 1);
    if (dot > 0 && dot < digits) text = `${text.slice(0, dot)}.${text.slice(dot)}`;
    else if (dot === digits && digits < 15) text = `0.${text}`;
    if (next(2) === 1) text = `-${text}`;
    const [b, s, e] = bytesOf(text);
    if (!same(plainDecimal(b, s, e), Number(text))) {
      wrong++;
      first ||= text;
    }
  }
  t.equal(wrong, 0, `every value as Number() reads it${first ? ` (first wrong: ${first})` : ''}`);
});
