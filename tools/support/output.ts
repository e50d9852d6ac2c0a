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

  constructor(private readonly stream: Writable) {
    // A listener must stay attached: an unhandled 'error' (EPIPE) would crash the process.
    stream.on('error', (e: Error) => {
      this.failure ??= e;
    });
  }

  /** Writes `chunk`; resolves once the stream can take more. Throws OutputClosed on EPIPE. */
  async write(chunk: string | Buffer): Promise<void> {
    this.check();
    if (!this.stream.write(chunk)) {
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
