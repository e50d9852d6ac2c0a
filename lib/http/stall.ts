/**
 * Drops a streamed response whose client stopped reading. Backpressure makes the scan wait for the
 * socket, which is right for a slow reader but would let a client that reads nothing hold its scan
 * (and a maxScans slot) forever.
 *
 * Not node's socket timeout (`res.setTimeout`): its first expiry after a write that the kernel took
 * only in part counts that partial write as progress and re-arms (net.Socket._onTimeout compares the
 * write's whole size with what is left queued), so a stalled client was dropped at 2-2.7x the
 * setting (5 s -> 10.4-13.5 s). Here the stall clock is ours: it runs only while output waits, and
 * any byte the client takes restarts it.
 */
import type { ServerResponse } from 'node:http';
import { socketWriteQueueSize } from '../deps/internals.js';

/**
 * Checks per stall period: the drop lands within 1/20 = 5% after the setting (asked: 1.2x), at
 * most 20 checks per period per stalled scan, nothing at all between scans.
 */
const CHECKS_PER_PERIOD = 20;
/** Bounds of the check interval: no busier than 10 ms, no coarser than 1 s (1.7% of the 60 s default). */
const MIN_CHECK_MS = 10;
const MAX_CHECK_MS = 1000;

/**
 * Destroys `res` once output has been waiting for the client for `ms` without the client taking
 * a byte (a stall), after calling `onStall`. A quiet socket with nothing to send is a store still
 * looking for rows: never a stall, and it restarts the clock.
 */
export function dropWhenStalled(res: ServerResponse, ms: number, onStall: () => void): void {
  const checkMs = Math.max(MIN_CHECK_MS, Math.min(MAX_CHECK_MS, Math.floor(ms / CHECKS_PER_PERIOD)));
  let since = performance.now();
  let last = '';
  const timer = setInterval(() => {
    const socket = res.socket;
    const waiting = socket !== null && (socket.writableLength > 0 || res.writableNeedDrain);
    // What is still to send: it shrinks when the client takes bytes (it grows only by our own
    // writes, which happen after the client drained some). Any change restarts the clock. libuv's
    // queue counts a client that takes part of one large write as reading; where the handle has
    // no count, progress is seen at whole writes only, which errs towards keeping a client.
    const state = waiting ? `${socket.writableLength}/${socketWriteQueueSize(socket) ?? ''}` : '';
    const now = performance.now();
    if (!waiting || state !== last) {
      last = state;
      since = now;
      return;
    }
    if (now - since >= ms) {
      clearInterval(timer);
      onStall();
      res.destroy();
    }
  }, checkMs);
  // The check never keeps the process alive, and ends with the response however it ends.
  timer.unref();
  res.once('close', () => clearInterval(timer));
}
