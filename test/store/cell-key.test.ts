/**
 * cellKeyFits (lib/store/lmdb/cell-key.ts) answers from a bound when it can and from the exact
 * encoded length otherwise: it must agree with cellKeyLength <= LMDB_MAX_KEY everywhere, and most
 * of all near the limit, with zero bytes (escaped to two) and multi-byte UTF-8 in the names.
 */
import t from 'tap';
import { cellKeyFits, cellKeyLength, LMDB_MAX_KEY } from '../../lib/store/lmdb/cell-key.js';

t.test('cellKeyFits agrees with the exact cell key length around the limit', async (t) => {
  let seed = 7;
  const next = (n: number): number => {
    seed = (seed * 1103515245 + 12345) % 2147483648;
    return Math.floor((seed / 2147483648) * n);
  };
  const units = ['a', '\u00e9', '\u20ac', '\ud83d\ude00', '\u0000'];
  let disagreements = 0;
  let fits = 0;
  for (let i = 0; i < 20_000; i++) {
    const rowKey = Buffer.from(Array.from({ length: next(1200) }, () => (next(4) === 0 ? 0 : 1 + next(255))));
    const family = 'f'.repeat(1 + next(30));
    let qualifier = '';
    for (let n = next(700); n > 0; n--) qualifier += units[next(units.length)];
    const exact = cellKeyLength(rowKey, family, qualifier) <= LMDB_MAX_KEY;
    if (exact) fits++;
    if (cellKeyFits(rowKey, family, qualifier) !== exact) disagreements++;
  }
  // Sweeps across the limit where each part of the bound is tight: zero bytes in the row key (two
  // bytes each once escaped), three-byte characters and escaped zeros in the qualifier.
  const sweeps: [Buffer, string][] = [];
  for (let n = 950; n <= 1000; n++) sweeps.push([Buffer.alloc(n), '']);
  for (let n = 600; n <= 680; n++) sweeps.push([Buffer.from('k'), '\u20ac'.repeat(n)]);
  for (let n = 960; n <= 1000; n++) sweeps.push([Buffer.from('k'), '\u0000'.repeat(n)]);
  for (const [rowKey, qualifier] of sweeps) {
    const exact = cellKeyLength(rowKey, 'f', qualifier) <= LMDB_MAX_KEY;
    if (exact) fits++;
    if (cellKeyFits(rowKey, 'f', qualifier) !== exact) disagreements++;
  }
  t.equal(disagreements, 0, 'same answer as the exact length for 20,000 random keys and the sweeps across the limit');
  t.ok(fits > 2_000 && fits < 18_000, `both answers well represented (${fits} fit)`);
});
