/**
 * Reads several key ranges at once and writes them in key order: the range whose turn it is goes
 * straight to the output; ranges read ahead of it are spooled to temporary files in `spoolDir()`
 * (called only then: an export whose ranges all come in turn makes no spool folder),
 * and a spool is copied to the output when its range's turn comes (a range still being read then
 * goes on straight to the output). At most `parallel` ranges are read at a time,
 * and none more than 2 x `parallel` ranges ahead of the output (bounding the spooled bytes). The
 * output is always a prefix of the export in key order, so an interrupted export can resume.
 */
import { createReadStream, createWriteStream, rmSync } from 'node:fs';
import { join } from 'node:path';
import type { ChunkSource } from '../../lib/rows/row-stream.js';
import { Output } from './output.js';

export interface OrderedResult {
  readonly rows: number;
  readonly cells: number;
  readonly bytes: number;
}

export interface OrderedOptions {
  readonly parallel: number;
  /** The spool folder, made by the first call. */
  readonly spoolDir: () => string;
  /** Told the rows, bytes and cells of each chunk as it is read (for progress). */
  readonly onChunk?: (rows: number, bytes: number, cells: number) => void;
  /** Told the rows each write to the output added. */
  readonly onWritten?: (rows: number) => void;
  readonly signal?: AbortSignal;
}

interface Slot {
  /** While the range is read ahead of its turn: where its chunks wait, and the rows they hold. */
  spool?: Output;
  spoolPath?: string;
  spooledRows: number;
  rows: number;
  cells: number;
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
  /** Writes a range's spool (ended first if still open) to the output and removes it. */
  const copySpool = async (slot: Slot): Promise<void> => {
    if (slot.spoolPath === undefined) return;
    await slot.spool?.end();
    for await (const c of createReadStream(slot.spoolPath)) await output.write(c as Buffer);
    rmSync(slot.spoolPath, { force: true });
    options.onWritten?.(slot.spooledRows);
    slot.spool = undefined;
    slot.spoolPath = undefined;
    slot.spooledRows = 0;
  };
  const read = async (i: number, slot: Slot): Promise<void> => {
    const source = sources[i]!();
    try {
      for (let chunk = await source.next(); chunk !== undefined; chunk = await source.next()) {
        // Another range failed: stop, and fail this one too, so no range after a gap is ever written.
        if (failed !== undefined) throw failed;
        if (options.signal?.aborted) throw options.signal.reason;
        options.onChunk?.(chunk.rows, chunk.bytes.length, chunk.cells);
        slot.rows += chunk.rows;
        slot.cells += chunk.cells;
        slot.bytes += chunk.bytes.length;
        if (i === head) {
          // Its turn came while it was being read: what waits in its spool first, then straight on.
          await copySpool(slot);
          await output.write(chunk.bytes);
          options.onWritten?.(chunk.rows);
          continue;
        }
        if (slot.spool === undefined) {
          slot.spoolPath = join(options.spoolDir(), `range-${i}`);
          slot.spool = new Output(createWriteStream(slot.spoolPath));
        }
        await slot.spool.write(chunk.bytes);
        slot.spooledRows += chunk.rows;
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
      const slot: Slot = { spooledRows: 0, rows: 0, cells: 0, bytes: 0, done: Promise.resolve() };
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
  let cells = 0;
  let bytes = 0;
  try {
    for (; head < sources.length; head++) {
      fill();
      const slot = slots[head]!;
      await slot.done;
      await copySpool(slot);
      rows += slot.rows;
      cells += slot.cells;
      bytes += slot.bytes;
    }
  } catch (e) {
    failed ??= e;
    await Promise.allSettled(slots.map((s) => s.done));
    throw failed;
  }
  return { rows, cells, bytes };
}
