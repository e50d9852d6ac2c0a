/**
 * Reads several key ranges at once and writes them in key order: the range being written goes
 * straight to the output; ranges read ahead of it are spooled to temporary files in `spoolDir`
 * and copied to the output when their turn comes. At most `parallel` ranges are read at a time,
 * and none more than 2 x `parallel` ranges ahead of the output (bounding the spooled bytes). The
 * output is always a prefix of the export in key order, so an interrupted export can resume.
 */
import { createReadStream, createWriteStream, rmSync } from 'node:fs';
import { join } from 'node:path';
import type { ChunkSource } from '../../lib/rows/row-stream.js';
import { Output } from './output.js';

export interface OrderedResult {
  readonly rows: number;
  readonly bytes: number;
}

export interface OrderedOptions {
  readonly parallel: number;
  readonly spoolDir: string;
  /** Told the rows and bytes of each chunk as it is read (for progress). */
  readonly onChunk?: (rows: number, bytes: number) => void;
  /** Told the rows each write to the output added. */
  readonly onWritten?: (rows: number) => void;
  readonly signal?: AbortSignal;
}

interface Slot {
  /** The first range is written straight to the output; the others are spooled. */
  readonly direct: boolean;
  spool?: Output;
  spoolPath?: string;
  rows: number;
  bytes: number;
  done: Promise<void>;
}

/** Writes the ranges' rows to `output` in order; `sources[i]()` opens range i. */
export async function writeInOrder(sources: readonly (() => ChunkSource)[], output: Output, options: OrderedOptions): Promise<OrderedResult> {
  const slots: Slot[] = [];
  let head = 0;
  let next = 0;
  let active = 0;
  let failed: unknown;
  const read = async (i: number, slot: Slot): Promise<void> => {
    const source = sources[i]!();
    try {
      for (let chunk = await source.next(); chunk !== undefined; chunk = await source.next()) {
        // Another range failed: stop, and fail this one too, so no range after a gap is ever written.
        if (failed !== undefined) throw failed;
        if (options.signal?.aborted) throw options.signal.reason;
        options.onChunk?.(chunk.rows, chunk.bytes.length);
        slot.rows += chunk.rows;
        slot.bytes += chunk.bytes.length;
        if (slot.direct) {
          await output.write(chunk.bytes);
          options.onWritten?.(chunk.rows);
          continue;
        }
        if (slot.spool === undefined) {
          slot.spoolPath = join(options.spoolDir, `range-${i}`);
          slot.spool = new Output(createWriteStream(slot.spoolPath));
        }
        await slot.spool.write(chunk.bytes);
      }
      await slot.spool?.end();
    } finally {
      await source.close();
    }
  };
  // Start ranges while fewer than `parallel` are reading and the spool stays within 2 x parallel ranges ahead.
  const fill = (): void => {
    while (failed === undefined && next < sources.length && active < options.parallel && next - head < options.parallel * 2) {
      const i = next++;
      const slot: Slot = { direct: i === 0, rows: 0, bytes: 0, done: Promise.resolve() };
      active++;
      slot.done = read(i, slot).then(
        () => {
          active--;
          fill();
        },
        (e: unknown) => {
          active--;
          failed ??= e;
          throw e;
        },
      );
      // Reported when the range's turn comes (or after a failure); never unhandled.
      slot.done.catch(() => undefined);
      slots[i] = slot;
    }
  };
  let rows = 0;
  let bytes = 0;
  try {
    for (; head < sources.length; head++) {
      fill();
      const slot = slots[head]!;
      await slot.done;
      if (slot.spoolPath !== undefined) {
        for await (const c of createReadStream(slot.spoolPath)) await output.write(c as Buffer);
        rmSync(slot.spoolPath, { force: true });
        options.onWritten?.(slot.rows);
      }
      rows += slot.rows;
      bytes += slot.bytes;
    }
  } catch (e) {
    failed ??= e;
    await Promise.allSettled(slots.map((s) => s.done));
    throw failed;
  }
  return { rows, bytes };
}
