import t from 'tap';
import { requestUuid } from '../../lib/http/request-uuid.js';

const V4 = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;

t.test('request ids are version 4 UUIDs, all different, over several refills of the random pool', async (t) => {
  const seen = new Set<string>();
  let malformed = 0;
  // 256 ids a refill: 2,000 ids cross it seven times.
  for (let i = 0; i < 2000; i++) {
    const id = requestUuid();
    if (!V4.test(id)) malformed++;
    seen.add(id);
  }
  t.equal(malformed, 0);
  t.equal(seen.size, 2000);
});

t.test('every hex digit outside the version and variant varies (the random bytes reach each place)', async (t) => {
  const ids = Array.from({ length: 512 }, () => requestUuid());
  const fixed: number[] = [];
  for (let at = 0; at < 36; at++) {
    if ([8, 13, 14, 18, 23].includes(at)) continue; // dashes, the version digit
    if (new Set(ids.map((id) => id[at])).size === 1) fixed.push(at);
  }
  t.same(fixed, []);
  t.same(new Set(ids.map((id) => id[19])), new Set(['8', '9', 'a', 'b']), 'the variant digit takes its four values');
});

t.test('an id is a string of its own, not a view that the next id changes', async (t) => {
  const first = requestUuid();
  const copy = `${first}`;
  requestUuid();
  t.equal(first, copy);
});
