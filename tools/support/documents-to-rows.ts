/**
 * A gateway's row stream (revision 3 documents, each ended by CR LF) read back into rows, for
 * `rowgate export --url --format avro`: the client has only the text the gateway sent, so it parses
 * each document into the row's cells, which the Avro stages then encode as a local export's rows
 * are (lib/rows/stages/avro.ts).
 */
import { Duplex, Transform, type TransformCallback } from 'node:stream';
import { StringDecoder } from 'node:string_decoder';
import { parseExactJson, stringifyExactJson } from '../../lib/model/json/exact-json.js';
import type { CellOut, JsonValue, RowKeyFormat, RowOut, TableLayout } from '../../lib/model/types.js';
import { AvroEncodeStage, type AvroCodec } from '../../lib/rows/stages/avro.js';
import { ROW_TERMINATOR, rowKeyOfDocument } from '../../lib/rows/row-format.js';

type Document = { cells: Record<string, Record<string, { timestamp: JsonValue; value: JsonValue; writer_schema?: JsonValue }[]>> };

/** One revision 3 row document's row: its key (from the entity id) and cells in document order. */
export function rowOfDocument(document: string, format: RowKeyFormat): RowOut {
  const parsed = parseExactJson(document, 'row') as Document;
  const cells: CellOut[] = [];
  for (const [family, columns] of Object.entries(parsed.cells)) {
    for (const [qualifier, versions] of Object.entries(columns)) {
      for (const v of versions) {
        cells.push({
          family,
          qualifier,
          timestamp: v.timestamp as number | bigint,
          schemaId: Number(v.writer_schema ?? -1),
          json: stringifyExactJson(v.value),
        });
      }
    }
  }
  return { rowKey: rowKeyOfDocument(document, format, 3), cells };
}

/** CR LF framed documents in (bytes), batches of rows out (objects). */
export class DocumentsToRows extends Transform {
  private carry = '';
  private readonly decoder = new StringDecoder('utf8');

  constructor(private readonly format: RowKeyFormat) {
    super({ readableObjectMode: true });
  }

  override _transform(chunk: Buffer, _enc: BufferEncoding, done: TransformCallback): void {
    try {
      const lines = (this.carry + this.decoder.write(chunk)).split(ROW_TERMINATOR);
      this.carry = lines.pop()!;
      done(null, lines.length > 0 ? lines.map((line) => rowOfDocument(line, this.format)) : undefined);
    } catch (e) {
      done(e as Error);
    }
  }
}

/** CR LF framed documents in, an Avro object container file out: DocumentsToRows, then the Avro encoder. */
export function documentsToAvro(layout: TableLayout, codec: AvroCodec = 'null'): Duplex {
  const rows = new DocumentsToRows(layout.keyFormat);
  const encoder = new AvroEncodeStage(layout, true, codec);
  rows.on('error', (e) => encoder.destroy(e));
  rows.pipe(encoder);
  return Duplex.from({ writable: rows, readable: encoder });
}
