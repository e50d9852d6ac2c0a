/**
 * lib/rows/lent-bytes.ts: lent bytes are found by any view of their memory, their release is
 * handed out once, and bytes never lent (or sharing no memory with lent ones) have none.
 */
import t from 'tap';
import { lendBytes, takeRelease } from '../../lib/rows/lent-bytes.js';

t.test('a view of lent bytes finds their release once; other bytes find none', async (t) => {
  const bytes = Buffer.allocUnsafeSlow(64);
  let released = 0;
  lendBytes(bytes, () => released++);
  t.equal(takeRelease(Buffer.allocUnsafeSlow(64)), undefined, 'other memory: no release');
  const release = takeRelease(bytes.subarray(8, 16));
  t.type(release, 'function', 'a view of part of the lent bytes finds the release');
  t.equal(takeRelease(bytes), undefined, 'handed out once');
  release!();
  t.equal(released, 1);
});
