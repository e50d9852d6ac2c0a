/**
 * The framing stage of the reference scan pipeline (pipeline.ts): batches of row documents in,
 * one chunk of bytes per batch out, every document followed by the terminator: CR LF for the row
 * stream (KijiREST's framing), LF for NDJSON. The chunk carries where its last row starts and that
 * row's key, so a scan cut at its limit names the next page without reading the document back.
 */
import { Transform, type TransformCallback } from 'node:stream';
import type { RowTerminator } from '../row-document.js';
import type { RenderedChunk } from '../../store/store.js';
import type { DocumentBatch } from './serialize.js';

export function frame(batch: DocumentBatch, terminator: RowTerminator): RenderedChunk {
  const end = Buffer.from(terminator, 'latin1');
  const parts: Buffer[] = [];
  let lastStart = 0;
  let size = 0;
  for (const doc of batch.documents) {
    lastStart = size;
    parts.push(doc, end);
    size += doc.length + end.length;
  }
  const n = batch.rowKeys.length;
  return {
    bytes: Buffer.concat(parts, size),
    rows: n,
    cells: batch.cells,
    lastRow: n > 0 ? { start: lastStart, rowKey: batch.rowKeys[n - 1]! } : undefined,
  };
}

export class FramingStage extends Transform {
  constructor(private readonly terminator: RowTerminator) {
    super({ objectMode: true, highWaterMark: 1 });
  }

  override _transform(batch: DocumentBatch, _enc: BufferEncoding, done: TransformCallback): void {
    done(null, batch.rowKeys.length > 0 ? frame(batch, this.terminator) : undefined);
  }
}
