/**
 * parseQuery (lib/http/query.ts) cuts the query by hand and decodes ASCII `%XX` escapes itself;
 * it must give exactly what splitting on `&` and decodeURIComponent give, including the refusals
 * (a parameter given twice, invalid percent-encoding) and their messages. Checked on hand-picked
 * edge cases and on 20,000 random query strings over an alphabet of the characters that matter.
 */
import t from 'tap';
import { parseQuery } from '../../lib/http/query.js';
import { isRowgateError, rgError } from '../../lib/errors.js';

/** The specification: the straightforward implementation the hand-cut one replaced. */
function reference(search: string): Map<string, string> {
  const decode = (text: string, what: string): string => {
    const plus = text.replace(/\+/g, ' ');
    try {
      return decodeURIComponent(plus);
    } catch {
      throw rgError('RG_ERR_BAD_PARAMETER', `${what} has invalid percent-encoding: ${JSON.stringify(text.slice(0, 200))}`);
    }
  };
  const out = new Map<string, string>();
  for (const part of search.split('&')) {
    if (part === '') continue;
    const eq = part.indexOf('=');
    const name = decode(eq < 0 ? part : part.slice(0, eq), 'parameter name');
    const value = eq < 0 ? '' : decode(part.slice(eq + 1), `value of parameter ${name}`);
    if (out.has(name)) throw rgError('RG_ERR_BAD_PARAMETER', `parameter ${name} is given more than once`);
    out.set(name, value);
  }
  return out;
}

function outcome(parse: (s: string) => ReadonlyMap<string, string>, search: string): unknown {
  try {
    return { params: [...parse(search)] };
  } catch (e) {
    if (!isRowgateError(e)) throw e;
    return { code: e.code, message: e.message };
  }
}

const EDGES = [
  '',
  '&',
  '&&a=1&&',
  'eid=%5B123%5D',
  'eid=%5b123%5d',
  'eid=[1,2]&limit=-1',
  'a',
  'a=',
  '=a',
  '==',
  'a=b=c',
  'a=1&a=2',
  'a=1&%61=2',
  'a+b=c+d',
  '%2B=%2b',
  'x=%',
  'x=%4',
  'x=%4G',
  'x=%G4',
  'x=abc%',
  'x=%C3%A9',
  'x=%C3',
  'x=%e2%82%ac&y=%41',
  'x=%00%7F%80',
  'x=%41%C3%A9%42',
  '%ZZ=1',
  'x=%%41',
];

t.test('hand-picked queries parse as split and decodeURIComponent parse them', async (t) => {
  for (const search of EDGES) t.same(outcome(parseQuery, search), outcome(reference, search), JSON.stringify(search));
});

t.test('20,000 random queries parse as split and decodeURIComponent parse them', async (t) => {
  const alphabet = ['a', 'b', '=', '&', '+', '%', '%4', '%41', '%5B', '%5d', '%7F', '%80', '%C3', '%A9', '%C3%A9', '%E2%82%AC', '%g1', '1', 'é', '['];
  let seed = 12345;
  const random = (n: number): number => {
    seed = (seed * 1103515245 + 12345) % 2147483648;
    return seed % n;
  };
  let mismatches = 0;
  for (let i = 0; i < 20_000; i++) {
    let search = '';
    for (let n = random(12); n > 0; n--) search += alphabet[random(alphabet.length)];
    const got = outcome(parseQuery, search);
    const want = outcome(reference, search);
    if (JSON.stringify(got) !== JSON.stringify(want)) {
      if (mismatches++ < 5) t.same(got, want, JSON.stringify(search));
    }
  }
  t.equal(mismatches, 0, 'no query parses differently');
});
