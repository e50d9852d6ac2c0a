/**
 * `rowgate export`'s formats as its flags name them: the format an --out name implies, the codecs
 * each takes, which are whole files (not resumable). Shared by the command's flag checks
 * (tools/commands/export.ts) and the export itself (export-run.ts), and light to load: the checks
 * run before the export's modules are loaded.
 */
import { extname } from 'node:path';
import type { RowFormat } from '../../lib/rows/row-formats.js';
import { AVRO_CODECS, type AvroCodec } from '../../lib/model/avro/avro-codecs.js';
import { PARQUET_CODECS, type ParquetCodec } from '../../lib/rows/formats/parquet-codecs.js';
import { CliError, EXIT_USAGE } from './cli-error.js';
import type { RemoteFlags } from './remote.js';
import type { ScanFlags } from './read-options.js';
import type { StoreFlags } from './store-options.js';

export interface ExportFlags extends StoreFlags, ScanFlags, RemoteFlags {
  readonly instance: string;
  readonly table: string;
  readonly out?: string;
  readonly resume?: boolean;
  readonly parallel?: number;
  readonly format?: RowFormat;
  readonly codec?: AvroCodec | ParquetCodec;
  readonly rowGroupRows?: number;
}

/** An export's flags with its format settled (formatOf). */
export type ResolvedFlags = ExportFlags & { readonly format: RowFormat };

/** The output names whose format is not in doubt; any other name (x.json, x.out) is the row stream. */
const FORMAT_OF_EXTENSION: Readonly<Record<string, RowFormat>> = { '.ndjson': 'ndjson', '.jsonl': 'ndjson', '.avro': 'avro', '.parquet': 'parquet' };

/** Formats whose file has its index at the end (Avro's blocks, Parquet's footer): not cut at a row, so not resumable. */
export const WHOLE_FILE_FORMATS: ReadonlySet<RowFormat> = new Set(['avro', 'parquet']);

/** The versions a Parquet export asks for: each column its newest value unless --versions was given. */
export function parquetVersions(given: string | undefined, fromCommandLine: boolean): string {
  return fromCommandLine && given !== undefined ? given : '1';
}

/** A whole-file format's name in a message, with its article. */
export const FORMAT_TITLE: Readonly<Record<string, string>> = { avro: 'an Avro', parquet: 'a Parquet' };

/** The codecs each format takes (--codec). */
export const CODECS_OF: Readonly<Record<string, readonly string[]>> = { avro: AVRO_CODECS, parquet: PARQUET_CODECS };

/**
 * --format, else the one --out's extension names, else json. `--out users.ndjson` alone wrote CR
 * LF JSON; a --format that contradicts the extension is refused rather than guessed between.
 */
export function formatOf(format: RowFormat | undefined, out: string | undefined): RowFormat {
  const named = out === undefined ? undefined : FORMAT_OF_EXTENSION[extname(out).toLowerCase()];
  if (format === undefined) return named ?? 'json';
  if (named !== undefined && named !== format) {
    throw new CliError(`--out ${out} names an ${named} file, but --format is ${format}: give --format ${named}, or an --out of another name`, EXIT_USAGE);
  }
  return format;
}
