/** The Avro container file's block codecs: null and deflate (raw DEFLATE, RFC 1951, as the Avro specification names it). Apart from avro-container.ts so a command's flags can name them without loading avsc. */
export type AvroCodec = 'null' | 'deflate';
export const AVRO_CODECS: readonly AvroCodec[] = ['null', 'deflate'];
