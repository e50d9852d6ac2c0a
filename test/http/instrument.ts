/**
 * Measuring instruments shared by the memory and backpressure tests: memory still referenced, and
 * rows the gateway pulled from a real store (the store itself is untouched; its scans are counted).
 */
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import type { Store } from '../../lib/store/store.js';

// A leak check needs the memory still referenced, not what the allocator happens to hold: RSS
// (RssAnon included) rose 106-113 MB in 8 s on loaded machines from garbage V8 had not collected
// yet. So: live heap and external memory (Buffers) after two full collections.
setFlagsFromString('--expose-gc');
const collectGarbage = runInNewContext('gc') as () => void;

/** Live heap plus external memory (Buffers) after full collections. */
export function heldMemory(): number {
  collectGarbage();
  collectGarbage();
  const m = process.memoryUsage();
  return m.heapUsed + m.external;
}

/** Counts rows the gateway pulled from the store: row batches of scan(), rendered chunks of scanChunks(). */
export function countPulledRows(store: Store): { pulled: number } {
  const counter = { pulled: 0 };
  const scan = store.scan.bind(store);
  store.scan = (instance, table, req) => {
    const it = scan(instance, table, req);
    const next = it.next.bind(it);
    it.next = async () => {
      const r = await next();
      if (!r.done) counter.pulled += r.value.length;
      return r;
    };
    return it;
  };
  const scanChunks = store.scanChunks!.bind(store);
  store.scanChunks = (instance, table, req, render) => {
    const it = scanChunks(instance, table, req, render);
    const next = it.next.bind(it);
    it.next = async () => {
      const r = await next();
      if (!r.done) counter.pulled += r.value.rows;
      return r;
    };
    return it;
  };
  return counter;
}
