/**
 * packRows (lib/store/lmdb/prepared-batch.ts) hands a batch over sorted by row prefix in unsigned
 * byte order, whatever the prefixes' lengths (under 6 bytes or longer, sharing their first 6 or
 * 12 bytes or not: the sort compares six bytes at a time as numbers), and stably: two writes of
 * one row are merged into one in their order in the batch (the later one's cell replaces the earlier's).
 */
import t from 'tap';
import { parseLayout } from '../../lib/model/layout/layout.js';
import type { RowWrite } from '../../lib/model/types.js';
import { packRows, preparedRows } from '../../lib/store/lmdb/prepared-batch.js';
import { rowPrefix } from '../../lib/store/lmdb/cell-key.js';
import { decodeCompactRow } from '../../lib/store/lmdb/compact-row.js';
import { RAW_LAYOUT } from './conformance.js';

const layout = parseLayout(RAW_LAYOUT);

t.test('rows come out in byte order of their prefixes, equal keys merged in batch order', async (t) => {
  let seed = 42;
  const next = () => (seed = (seed * 1103515245 + 12345) % 2147483648) / 2147483648;
  // Keys over a 3-byte alphabet (0x00, 0x7f, 0xff: escapes, sign-sensitive bytes): many share
  // their first bytes, some are prefixes of others, some repeat. Rounds of 1-7 bytes (prefixes
  // mostly shorter than the first 6 bytes compared as a number), and of 4-14 bytes (prefixes of
  // 6-30 bytes: ties in bytes 0-5 and 0-11 decided by the bytes after them).
  const alphabet = [0x00, 0x7f, 0xff];
  for (let round = 0; round < 40; round++) {
    const rows: RowWrite[] = [];
    const [shortest, spread] = round < 20 ? [1, 7] : [4, 11];
    for (let i = 0; i < 500; i++) {
      const key = Buffer.from(Array.from({ length: shortest + Math.floor(next() * spread) }, () => alphabet[Math.floor(next() * 3)]!));
      rows.push({ rowKey: key, cells: [{ kind: 'value', family: 'info', qualifier: 'age', timestamp: 1, schemaId: 2, json: String(i) }] });
    }
    const batch = packRows(rows, layout, Infinity)!;
    const out = [...preparedRows(batch)].map(({ prefix, encoded }) => ({
      prefix: Buffer.from(prefix),
      order: Number([...decodeCompactRow(Buffer.from(encoded)).cells()][0]!.json),
    }));
    // Rows of one key are merged into one; their cells share a timestamp, so the last row's wins.
    const last = new Map<string, { prefix: Buffer; order: number }>();
    rows.forEach((r, order) => last.set(rowPrefix(r.rowKey).toString('hex'), { prefix: rowPrefix(r.rowKey), order }));
    const expected = [...last.values()].sort((a, b) => Buffer.compare(a.prefix, b.prefix));
    t.same(
      out.map((o) => `${o.prefix.toString('hex')}/${o.order}`),
      expected.map((o) => `${o.prefix.toString('hex')}/${o.order}`),
      `round ${round}: sorted by prefix bytes, a key's rows merged in batch order`,
    );
  }
});
