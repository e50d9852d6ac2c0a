/**
 * The options commands share, as commander options: where the store is (--config, --data), a
 * gateway to read instead (--url, --token), and which rows and cells (get, scan, export). Only
 * their definitions: each command parses them with the modules that use them (store-options.ts,
 * remote.ts, read-options.ts), which it loads after its flags are checked. This module stays light
 * to load (commander and the configuration's defaults), so a command's flags are read before the
 * store's modules load (export starts a scan thread then: tools/commands/export.ts).
 */
import { InvalidArgumentError, type Command } from 'commander';
import { DEFAULT_DATA_DIR } from '../../lib/config/config.js';

/** The environment variable a gateway's bearer token is read from (--token's safer twin). */
export const TOKEN_ENV = 'ROWGATE_TOKEN';

export function withStoreOptions(cmd: Command): Command {
  return cmd
    .option('--config <file>', 'YAML configuration file (the same file as serve; its store: section names the store)')
    .option('--data <dir>', `data directory of the embedded store (default ${DEFAULT_DATA_DIR}; overrides store.path)`);
}

export function withRemoteOptions(cmd: Command): Command {
  return cmd
    .option('--url <url>', 'read from a running gateway (http://host:port) instead of a local store')
    .option('--token <token>', `bearer token for --url (better: the ${TOKEN_ENV} environment variable, which other users cannot see)`);
}

export function withReadOptions(cmd: Command, defaultVersions: string): Command {
  return cmd
    .option('--cols <cols>', 'columns: * or a comma-separated list of family and family:qualifier, or a JSON array of exact names', '*')
    .option('--versions <n>', 'versions per column: a positive integer or all', defaultVersions)
    .option('--timerange <min..max>', 'cell timestamps in [min, max) milliseconds; one side may be empty');
}

export function withScanOptions(cmd: Command, defaultLimit: string, defaultVersions: string): Command {
  return withReadOptions(cmd, defaultVersions)
    .option('--limit <n>', 'rows at most (-1 = all)', defaultLimit)
    .option(
      '--eid <eid>',
      'one row by entity id, or with [] wildcard components (e.g. ["a", []]) the rows matching it, up to --limit; not with --start-eid/--end-eid',
    )
    .option('--start-eid <eid>', 'first entity id (inclusive): a JSON array such as [1234], or rowkey=... / rowkey_hex=...')
    .option('--end-eid <eid>', 'entity id to stop before (exclusive), in the same forms');
}

/** commander argument parser for a positive integer option. */
export function positiveInteger(text: string): number {
  const n = /^[0-9]+$/.test(text) ? Number(text) : NaN;
  if (!Number.isSafeInteger(n) || n < 1) throw new InvalidArgumentError('must be a positive integer');
  return n;
}
