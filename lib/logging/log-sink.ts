/**
 * Where the gateway's log lines go: a file descriptor (stderr), written synchronously in large
 * pieces. pino's own lines (start-up, warnings, errors) are written at once; request lines, one a
 * request, gather in memory and go out when 64 KiB have gathered or 50 ms after the first of them,
 * and whatever is left is written when the process exits (process.exit() included).
 *
 * Why not pino.destination: sonic-boom cost about 2 us a line whether synchronous or not
 * (300,000 lines: 2.85 us of CPU a line through pino and sonic-boom, 2.10 us handing sonic-boom a
 * ready line, 0.25 us appending it to a string written every 64 KiB), and point reads answer a
 * request in about 20 us of CPU.
 *
 * A reader that does not keep up (stderr a full non-blocking pipe: EAGAIN) keeps lines waiting up
 * to MAX_PENDING_BYTES; request lines beyond that are dropped and counted, and a warning line says
 * how many once the reader catches up. pino's own lines are never dropped.
 */
import { fstatSync, writeSync } from 'node:fs';
import { ByteWriter } from '../bytes/byte-writer.js';

/** Request lines written together to a pipe or terminal: one write(2) per ~64 KiB (about 300 lines of 220 bytes), what a pipe holds. */
const FLUSH_BYTES = 64 * 1024;
/**
 * To a regular file, 1 MiB a write: each write to an ext4 file cost about 80 us beyond its bytes
 * in a loaded point-read server (the profile's writeSync: 113 us per 64 KiB, 180 us per 256 KiB),
 * 0.38 us a request line at 64 KiB against 0.08 us at 1 MiB (40,000 req/s, same machine).
 */
const FILE_FLUSH_BYTES = 1024 * 1024;
/** Room beyond FLUSH_BYTES for the line that crosses it (a request line is about 220 bytes). */
const LINE_ROOM = 16 * 1024;
/** How long a request line may wait for others before it is written. */
const FLUSH_DELAY_MS = 50;
/** Lines kept for a reader that does not keep up, before request lines are dropped. */
const MAX_PENDING_BYTES = 16 * 1024 * 1024;
/** Linux's PIPE_BUF: a pipe write of at most this many bytes is never interleaved with another's. */
const PIPE_BUF = 4096;
/** At exit, how long a full pipe is waited for before the last lines are given up. */
const EXIT_WAIT_MS = 2000;

export class LogSink {
  /**
   * Lines not yet handed to write(2), encoded into `out` as they come (it grows for a reader
   * that does not keep up, or a long line). Appending a line to
   * a string and encoding the whole 64 KiB at flush cost 0.62 us a line in a point-read server's
   * profile (V8 flattening a rope of hundreds of lines, then UTF-8); encoding each line into this
   * buffer costs about 0.08 us (300,000 lines of 220 bytes).
   */
  private readonly out: ByteWriter;
  /** Bytes a partial write left over (written before `out`). */
  private leftover: Buffer | undefined;
  private timer: NodeJS.Timeout | undefined;
  private dropped = 0;

  private readonly base: string;
  private readonly maxPendingBytes: number;
  private readonly shared: boolean;
  private readonly flushBytes: number;

  /**
   * `base`: the fields every line carries after its time (pino's bindings, e.g. `,"service":"rowgate"`);
   * `maxPendingBytes`: what a reader that does not keep up may leave waiting (tests make it small);
   * `shared`: other processes write to the same descriptor (`--workers`): each write is then whole
   * lines of at most PIPE_BUF bytes, which a pipe never interleaves with another writer's.
   */
  constructor(
    private readonly fd: number,
    options: { readonly base?: string; readonly maxPendingBytes?: number; readonly shared?: boolean } = {},
  ) {
    this.base = options.base ?? '';
    this.maxPendingBytes = options.maxPendingBytes ?? MAX_PENDING_BYTES;
    this.shared = options.shared ?? false;
    this.flushBytes = isRegularFile(fd) ? FILE_FLUSH_BYTES : FLUSH_BYTES;
    this.out = new ByteWriter(this.flushBytes + LINE_ROOM);
    process.on('exit', () => this.flushAtExit());
  }

  /** pino's destination interface: its lines (rare, and errors among them) are written at once. */
  write(line: string): boolean {
    this.out.text(line);
    this.flush();
    return true;
  }

  /** A request line: written with the lines around it, within FLUSH_DELAY_MS. */
  writeLater(line: string): void {
    const out = this.lineWriter();
    if (out === undefined) return;
    out.text(line);
    this.lineWritten();
  }

  /**
   * Where the caller encodes one request line itself (then calls lineWritten()), or undefined
   * when the line is to be dropped (counted): a reader that does not keep up.
   */
  lineWriter(): ByteWriter | undefined {
    if (this.out.pos + (this.leftover?.length ?? 0) >= this.maxPendingBytes) {
      this.dropped++;
      return undefined;
    }
    return this.out;
  }

  /** After a line was encoded into lineWriter(): written with the lines around it, within FLUSH_DELAY_MS. */
  lineWritten(): void {
    if (this.out.pos >= this.flushBytes) this.flush();
    else if (this.timer === undefined) {
      this.timer = setTimeout(() => {
        this.timer = undefined;
        this.flush();
      }, FLUSH_DELAY_MS);
      this.timer.unref();
    }
  }

  /** Writes what waits; what a full pipe does not take waits for the next call. True when nothing waits. */
  flush(): boolean {
    if (this.timer !== undefined) {
      clearTimeout(this.timer);
      this.timer = undefined;
    }
    if (this.dropped > 0 && this.leftover === undefined) {
      const dropped = this.dropped;
      this.dropped = 0;
      this.out.text(`{"level":40,"time":${Date.now()}${this.base},"msg":"request log lines dropped: the log reader did not keep up","dropped":${dropped}}\n`);
    }
    if (this.leftover === undefined && this.out.pos === 0) return true;
    const waiting = this.out.buf.subarray(0, this.out.pos);
    let bytes = this.leftover === undefined ? waiting : Buffer.concat([this.leftover, waiting]);
    this.leftover = undefined;
    try {
      while (bytes.length > 0) bytes = bytes.subarray(writeSync(this.fd, bytes, 0, this.shared ? wholeLines(bytes) : bytes.length));
      this.out.pos = 0;
      return true;
    } catch (e) {
      this.out.pos = 0;
      if ((e as NodeJS.ErrnoException).code !== 'EAGAIN') {
        // A closed or broken stderr: the lines have nowhere to go, and logging must not end the gateway.
        return true;
      }
      // A copy: `bytes` may be a view of `out`, which takes the next lines.
      this.leftover = Buffer.from(bytes);
      this.timer ??= setTimeout(() => {
        this.timer = undefined;
        this.flush();
      }, FLUSH_DELAY_MS).unref();
      return false;
    }
  }

  private flushAtExit(): void {
    const deadline = Date.now() + EXIT_WAIT_MS;
    const pause = new Int32Array(new SharedArrayBuffer(4));
    while (!this.flush() && Date.now() < deadline) Atomics.wait(pause, 0, 0, 5);
  }
}

function isRegularFile(fd: number): boolean {
  try {
    return fstatSync(fd).isFile();
  } catch {
    return false;
  }
}

/** How many leading bytes to write at once: whole lines within PIPE_BUF (a longer line alone). */
export function wholeLines(bytes: Buffer): number {
  if (bytes.length <= PIPE_BUF) return bytes.length;
  const lastEnd = bytes.lastIndexOf(0x0a, PIPE_BUF - 1);
  if (lastEnd >= 0) return lastEnd + 1;
  const end = bytes.indexOf(0x0a);
  return end < 0 ? bytes.length : end + 1;
}
