/**
 * Chunk bytes lent to a response: a scan's chunk whose memory the store wants back once it is
 * sent (RenderedChunk.release). The row stream lends each such chunk when it pushes it; the
 * response (lib/http/gateway-response.ts) gives it back when the socket has taken the write,
 * since only the write's callback says that nothing holds the bytes any more, and node's pipe
 * passes a chunk on without one.
 *
 * Keyed by the chunk's ArrayBuffer, so a view of part of it (a row cut off by a limit) finds it
 * too. Weak: bytes that go another way (a format stage, compression, a file) are never given
 * back, and their memory is collected as before.
 */
const lent = new WeakMap<ArrayBufferLike, () => void>();

/** `bytes` go out through a response, which calls `release` once they are written. */
export function lendBytes(bytes: Buffer, release: () => void): void {
  lent.set(bytes.buffer, release);
}

/** The release of lent bytes (forgotten: it is called at most once), or undefined for bytes not lent. */
export function takeRelease(bytes: Uint8Array): (() => void) | undefined {
  const release = lent.get(bytes.buffer);
  if (release !== undefined) lent.delete(bytes.buffer);
  return release;
}
