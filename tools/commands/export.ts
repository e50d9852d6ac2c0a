/**
 * `rowgate export --instance I --table T [--out FILE]`: the table (or the selected rows: a key
 * range, one entity id or a wildcard one; columns, versions and time range) in the row stream format: each row one compact revision 3 row JSON
 * document followed by CR LF, byte for byte what GET rows returns for the same selection. All
 * rows and all versions unless limited. Written with backpressure; a file is written under
 * FILE.partial and renamed when complete, so a failed export never leaves a truncated FILE.
 *
 * From a local store, or from a running gateway (`--url`, `--token` or ROWGATE_TOKEN), there with
 * `--parallel N` split ranges (GET .../splits) read N at a time and written in key order: the same
 * bytes as one full scan. An export that stops early (Ctrl-C, killed, a failure) keeps
 * FILE.partial and says how to continue: `--resume` goes on after its last complete row.
 */
import { Option, type Command } from 'commander';
import { loadConfig } from '../../lib/config/config.js';
import { AVRO_CODECS } from '../../lib/model/avro/avro-codecs.js';
import { ROW_FORMATS, type RowFormat } from '../../lib/rows/row-formats.js';
import { PARQUET_CODECS } from '../../lib/rows/formats/parquet-codecs.js';
import { startScanThreadEarly } from '../../lib/store/lmdb/scan-pool.js';
import type { ScanEncoder } from '../../lib/store/lmdb/scan-protocol.js';
import { CliError, EXIT_USAGE } from '../support/cli-error.js';
import { CODECS_OF, FORMAT_TITLE, formatOf, parquetVersions, WHOLE_FILE_FORMATS, type ExportFlags, type ResolvedFlags } from '../support/export-formats.js';
import { positiveInteger, withRemoteOptions, withScanOptions, withStoreOptions } from '../support/command-options.js';

/** The encoder a format's scan threads load (export-parquet.ts: Parquet is written from Arrow batches). */
const SCAN_ENCODER: Readonly<Partial<Record<RowFormat, ScanEncoder>>> = { parquet: 'arrow', avro: 'avro' };

export function registerExport(program: Command): void {
  const cmd = withRemoteOptions(
    withStoreOptions(
      program
        .command('export')
        .description(
          'write rows as json (revision 3 JSON + CR LF per row, as GET rows), ndjson or avro (a container file) or parquet (--format, or from --out)',
        ),
    )
      .requiredOption('--instance <name>', 'instance')
      .requiredOption('--table <name>', 'table')
      .option('--out <file>', 'write to FILE instead of standard output (through FILE.partial, renamed when complete; a device or pipe is written in place)')
      .option('--resume', 'continue an interrupted export to --out FILE after the last complete row of FILE.partial')
      .option('--parallel <n>', 'with --url: read N split ranges at once, written in key order', positiveInteger)
      .addOption(
        new Option(
          '--format <format>',
          'json (CR LF after each row, as GET rows), ndjson (LF), avro (an Avro object container file, schema from the layout) or parquet (a Parquet file of typed columns from the layout; newest version unless --versions is given); default: from --out (.ndjson or .jsonl: ndjson, .avro: avro, .parquet: parquet), else json',
        ).choices([...ROW_FORMATS]),
      )
      .addOption(
        new Option(
          '--codec <codec>',
          "avro: the container file's block compression, null (none, the default) or deflate (about 3x smaller, slower); parquet: the pages' compression, snappy (the default, fast), zstd, gzip, brotli (smaller, slower) or uncompressed",
        ).choices([...new Set([...AVRO_CODECS, ...PARQUET_CODECS])]),
      )
      .option('--row-group-rows <n>', 'parquet: rows per row group (default 65536); the export holds one group in memory', positiveInteger),
  );
  withScanOptions(cmd, '-1', 'all').action(async (given: ExportFlags, command: Command) => {
    const format = formatOf(given.format, given.out);
    // A Parquet file is for analytics engines: one typed value a column (the newest) unless --versions asks for lists.
    const versions = format === 'parquet' ? parquetVersions(given.versions, command.getOptionValueSource('versions') === 'cli') : given.versions;
    const flags: ResolvedFlags = { ...given, format, versions };
    const parallel = flags.parallel ?? 1;
    if (parallel > 1 && flags.url === undefined) {
      throw new CliError('--parallel reads split ranges from a gateway: give --url (a local export already renders on the scan threads)', EXIT_USAGE);
    }
    const codecs = CODECS_OF[flags.format];
    if (flags.codec !== undefined && codecs === undefined)
      throw new CliError(
        `--codec compresses an Avro file's blocks: give --format avro (the ${flags.format} format has no codec), or a Parquet file's pages: give --format parquet`,
        EXIT_USAGE,
      );
    if (flags.codec !== undefined && !codecs!.includes(flags.codec))
      throw new CliError(`--codec ${flags.codec} is not ${FORMAT_TITLE[flags.format]} codec: give one of ${codecs!.join(', ')}`, EXIT_USAGE);
    if (flags.rowGroupRows !== undefined && flags.format !== 'parquet')
      throw new CliError(`--row-group-rows sizes a Parquet file's row groups: give --format parquet (the ${flags.format} format has none)`, EXIT_USAGE);
    if (WHOLE_FILE_FORMATS.has(flags.format) && flags.resume === true)
      throw new CliError(`--resume continues json and ndjson exports (${FORMAT_TITLE[flags.format]} file is not cut at a row)`, EXIT_USAGE);
    // A whole-table scan of a local store runs on its scan threads: one starts now, while the
    // export's modules load (startScanThreadEarly).
    if (flags.url === undefined && flags.limit === '-1' && flags.eid === undefined) {
      const { store } = loadConfig({ config: flags.config, data: flags.data });
      if (store.kind === 'lmdb') startScanThreadEarly(store.path, store.scanThreads, SCAN_ENCODER[flags.format]);
    }
    await (await import('../support/export-run.js')).runExport(flags);
  });
}
