/**
 * Writing a command's data output with backpressure: a chunk is written only once the stream has
 * drained, so a slow consumer (a pipe, a disk) pins at most one chunk. A closed pipe (EPIPE, as
 * with `| head`) is reported as `closed` so the command stops reading quietly.
 */
import { once } from 'node:events';
import type { Writable } from 'node:stream';

export class OutputClosed extends Error {
  constructor() {
    super('output closed by the reader');
    this.name = 'OutputClosed';
  }
}

export class Output {
  private failure: Error | undefined;

  /**
   * `sink`: the stream is a file or standard output, done with a chunk's bytes once its write's
   * callback ran, so a chunk's memory can be given back then (write's `release`). A stage that
   * turns rows into another format may pass slices of a chunk on: not a sink.
   */
  constructor(
    private readonly stream: Writable,
    private readonly sink = false,
  ) {
    // A listener must stay attached: an unhandled 'error' (EPIPE) would crash the process.
    stream.on('error', (e: Error) => {
      this.failure ??= e;
    });
  }

  /**
   * Writes `chunk`; resolves once the stream can take more. Throws OutputClosed on EPIPE.
   * `release` gives the chunk's memory back to where it came from (RenderedChunk.release: a scan
   * thread's chunk buffer) once a sink has written it, or a destroyed one dropped it.
   */
  async write(chunk: string | Buffer, release?: () => void): Promise<void> {
    this.check();
    const more = release !== undefined && this.sink ? this.stream.write(chunk, release) : this.stream.write(chunk);
    if (!more) {
      try {
        await once(this.stream, 'drain');
      } catch (e) {
        this.failure ??= e as Error;
      }
      this.check();
    }
  }

  /** Resolves when everything written so far has been handed to the system. */
  async flush(): Promise<void> {
    this.check();
    await new Promise<void>((resolve) => this.stream.write('', () => resolve()));
    this.check();
  }

  /** Ends the stream (files) and waits until it is finished. */
  async end(): Promise<void> {
    this.check();
    this.stream.end();
    if (!this.stream.writableFinished) {
      try {
        await once(this.stream, 'finish');
      } catch (e) {
        this.failure ??= e as Error;
      }
    }
    this.check();
  }

  private check(): void {
    const e = this.failure;
    if (e === undefined) return;
    if ((e as NodeJS.ErrnoException).code === 'EPIPE') throw new OutputClosed();
    throw e;
  }
}
