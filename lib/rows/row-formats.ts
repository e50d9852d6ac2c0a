/**
 * The formats rows are served and exported in: `json` (the row stream: compact revision 3 JSON
 * documents, each followed by CR LF; KijiREST's format and the default), `ndjson` (the same
 * documents, each followed by LF) and `avro` (an Avro object container file, schema derived from
 * the layout: lib/model/avro/avro-export.ts). GET rows picks one from the Accept header; clients that
 * send application/json, anything matching it, or no Accept get exactly the json bytes.
 *
 * json and ndjson differ only in the framing's terminator (terminatorOf), which the scan's
 * framing stage writes (or the LMDB fused loop, compiled in). avro is a stage after the row stream
 * that parses each CR LF framed row document back and encodes it.
 */
import { Transform, type TransformCallback } from 'node:stream';
import { StringDecoder } from 'node:string_decoder';
import avro from 'avsc';
import type { Revision } from '../config/config.js';
import { rgError } from '../errors.js';
import { avroExportOf } from '../model/avro/avro-export.js';
import type { TableLayout } from '../model/types.js';
import { entityIdOfDocument, ROW_TERMINATOR } from './row-format.js';
import type { RowTerminator } from './row-document.js';

export type RowFormat = 'json' | 'ndjson' | 'avro';
export const ROW_FORMATS: readonly RowFormat[] = ['json', 'ndjson', 'avro'];

export const CONTENT_TYPE: Record<RowFormat, string> = {
  json: 'application/json',
  ndjson: 'application/x-ndjson',
  avro: 'application/avro',
};

// A Map, not an object literal: an Accept of `constructor` or `__proto__` must not find Object's members.
const BY_MEDIA = new Map<string, RowFormat>([
  ['application/json', 'json'],
  ['application/*', 'json'],
  ['*/*', 'json'],
  ['application/x-ndjson', 'ndjson'],
  ['application/avro', 'avro'],
]);

/**
 * The format an Accept header asks for: the acceptable media range with the highest q (the first
 * listed among equals); json when there is no header. RG_ERR_NOT_ACCEPTABLE (406) when none is
 * served.
 */
export function negotiateRowFormat(accept: string | undefined): RowFormat {
  if (accept === undefined || accept.trim() === '') return 'json';
  // One media range without parameters (`*/*`, `application/json`: what clients send) needs no parsing.
  const whole = BY_MEDIA.get(accept);
  if (whole !== undefined) return whole;
  let best: RowFormat | undefined;
  let bestQ = 0;
  for (const range of accept.split(',')) {
    const [media = '', ...params] = range.split(';').map((p) => p.trim().toLowerCase());
    const format = BY_MEDIA.get(media);
    if (format === undefined) continue;
    const qParam = params.find((p) => p.startsWith('q='));
    const q = qParam === undefined ? 1 : Number(qParam.slice(2));
    if (Number.isFinite(q) && q > bestQ) {
      best = format;
      bestQ = q;
    }
  }
  if (best === undefined)
    throw rgError(
      'RG_ERR_NOT_ACCEPTABLE',
      `rows are served as application/json, application/x-ndjson or application/avro; Accept: ${accept.slice(0, 200)} names none of them`,
    );
  return best;
}

/** What ends each row of `format`'s stream: LF for NDJSON, CR LF otherwise (avro's stage reads CR LF framed rows). */
export function terminatorOf(format: RowFormat): RowTerminator {
  return format === 'ndjson' ? '\n' : ROW_TERMINATOR;
}

/** The stage turning the row stream (documents framed by terminatorOf(format), entity ids in `revision`'s form) into `format`; undefined for json and ndjson. */
export function formatStage(format: RowFormat, layout: TableLayout, revision: Revision): Transform | undefined {
  if (format === 'avro') return new AvroStage(layout, revision);
  return undefined;
}

/** Row documents in, an Avro object container file out (its header first, even for no rows). */
class AvroStage extends Transform {
  private carry = '';
  private readonly decoder = new StringDecoder('utf8');
  private readonly encoder: avro.streams.BlockEncoder;
  private readonly rowValue: (document: string) => unknown;
  private failure: Error | undefined;

  /** `revision`: the form the documents' entity ids are written in (the served revision's). */
  constructor(layout: TableLayout, revision: Revision) {
    super();
    const exp = avroExportOf(layout);
    this.rowValue = (document) => exp.rowValue(document, entityIdOfDocument(document, layout.keyFormat, revision));
    this.encoder = new avro.streams.BlockEncoder(exp.type, { codec: 'null' });
    this.encoder.on('data', (c: Buffer) => this.push(c));
    this.encoder.on('typeError', (e: Error) => {
      this.failure ??= e;
    });
  }

  override _transform(chunk: Buffer, _enc: BufferEncoding, done: TransformCallback): void {
    try {
      const text = this.carry + this.decoder.write(chunk);
      const lines = text.split('\r\n');
      this.carry = lines.pop()!;
      for (const line of lines) this.encoder.write(this.rowValue(line));
      done(this.failure);
    } catch (e) {
      done(e as Error);
    }
  }

  override _flush(done: TransformCallback): void {
    this.encoder.once('end', () => done(this.failure));
    this.encoder.end();
  }
}

/** A whole body (point and bulk gets) in `format`. */
export async function formatBody(format: RowFormat, layout: TableLayout, body: Buffer, revision: Revision): Promise<Buffer> {
  const stage = formatStage(format, layout, revision);
  if (stage === undefined) return body;
  const chunks: Buffer[] = [];
  stage.on('data', (c: Buffer) => chunks.push(c));
  const done = new Promise<void>((resolve, reject) => {
    stage.on('end', resolve);
    stage.on('error', reject);
  });
  stage.end(body);
  await done;
  return Buffer.concat(chunks);
}
