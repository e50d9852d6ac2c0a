/**
 * Drops a streamed response whose client stopped reading. Backpressure makes the scan wait for the
 * socket, which is right for a slow reader but would let a client that reads nothing hold its scan
 * (and a maxScans slot) forever.
 */
import type { ServerResponse } from 'node:http';

/**
 * After `ms` without socket progress, destroys `res` if output is waiting for the client (a stall).
 * A quiet socket with nothing to send is a store still looking for rows: left alone, and the timer
 * re-arms on the next write (node refreshes a socket's timeout on every write and read).
 */
export function dropWhenStalled(res: ServerResponse, ms: number, onStall: () => void): void {
  res.setTimeout(ms, () => {
    const socket = res.socket;
    if (socket !== null && (socket.writableLength > 0 || res.writableNeedDrain)) {
      onStall();
      res.destroy();
    }
  });
}
