/**
 * An Avro object container file made of blocks encoded apart (on the LMDB store's scan threads,
 * lib/store/lmdb/avro-chunk.ts): avsc writes the header and every datum; this module adds only a
 * block's frame (its row count and byte size as Avro longs, the data, the file's 16-byte sync
 * marker), which the Avro specification's "Object Container Files" section defines and avsc
 * writes only for values it encodes itself, one at a time through a stream. That stream cost
 * ~25% of a local Avro export (per-value writes, their callbacks and garbage: --cpu-prof of a
 * 1,000,000-row export, 9.9 s). test/model/avro-container.test.ts reads files made here back with
 * avsc's own decoder.
 */
import { randomBytes } from 'node:crypto';
import { deflateRawSync } from 'node:zlib';
import avro from 'avsc';
import type { AvroCodec } from './avro-codecs.js';
import type { AvroType } from './avro-types.js';

const LONG = avro.Type.forSchema('long');

/** A new file's sync marker: 16 random bytes, as the specification asks. */
export function newSyncMarker(): Buffer {
  return randomBytes(16);
}

/** One block: `count` datums, `data[0, length)`, compressed by `codec`, framed with the file's sync marker. */
export function avroBlock(data: Buffer, length: number, count: number, codec: AvroCodec, sync: Uint8Array): Buffer {
  const body = codec === 'deflate' ? deflateRawSync(data.subarray(0, length)) : data.subarray(0, length);
  return Buffer.concat([LONG.toBuffer(count), LONG.toBuffer(body.length), body, sync]);
}

/** The file's header (magic, metadata with the schema and codec, sync marker), written by avsc's BlockEncoder. */
export async function avroHeader(type: AvroType, codec: AvroCodec, sync: Uint8Array): Promise<Buffer> {
  const parts: Buffer[] = [];
  const encoder = new avro.streams.BlockEncoder(type as never, { codec, syncMarker: Buffer.from(sync), writeHeader: true } as never);
  encoder.on('data', (c: Buffer) => parts.push(c));
  await new Promise<void>((resolve, reject) => {
    encoder.once('end', resolve);
    encoder.once('error', reject);
    encoder.end();
  });
  return Buffer.concat(parts);
}
