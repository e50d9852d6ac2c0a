/**
 * `rowgate scan --instance I --table T [--limit N]`: a quick look at the first rows (10 by default;
 * those of a key range, or those a wildcard --eid matches, or one row), one revision 3 row JSON
 * document a line.
 */
import type { Command } from 'commander';
import { Output, OutputClosed } from '../support/output.js';
import { dumpRows } from '../support/row-dump.js';
import { withRemoteOptions, withScanOptions, withStoreOptions } from '../support/command-options.js';
import { selectionOf, type ScanFlags } from '../support/read-options.js';
import { withStore, type StoreFlags } from '../support/store-options.js';
import { Gateway, remotely, type RemoteFlags } from '../support/remote.js';
import { readParams, remoteRows } from '../support/remote-rows.js';

interface ScanCommandFlags extends StoreFlags, ScanFlags, RemoteFlags {
  readonly instance: string;
  readonly table: string;
}

export function registerScan(program: Command): void {
  const cmd = withRemoteOptions(
    withStoreOptions(program.command('scan').description('print the first rows of a table, one JSON document a line'))
      .requiredOption('--instance <name>', 'instance')
      .requiredOption('--table <name>', 'table'),
  );
  withScanOptions(cmd, '10', '1').action(async (flags: ScanCommandFlags) => {
    if (flags.url !== undefined) {
      await remotely(() => scanRemote(flags));
      return;
    }
    await withStore(flags, { create: false }, async ({ store }) => {
      const layout = await store.getLayout(flags.instance, flags.table);
      const output = new Output(process.stdout);
      try {
        await dumpRows({
          store,
          instance: flags.instance,
          table: flags.table,
          layout,
          selection: selectionOf(layout, flags, store.maxRowKeyBytes),
          output,
          terminator: '\n',
        });
        await output.flush();
      } catch (e) {
        if (!(e instanceof OutputClosed)) throw e;
      }
    });
  });
}

/** The rows a gateway answers for the same options (GET rows), one a line (LF, as locally). */
async function scanRemote(flags: ScanCommandFlags): Promise<void> {
  const gateway = new Gateway(flags);
  const layout = await gateway.layout(flags.instance, flags.table);
  const params: Record<string, string> = { ...readParams(flags) };
  if (flags.eid !== undefined) params.eid = flags.eid;
  if (flags.startEid !== undefined) params.start_eid = flags.startEid;
  if (flags.endEid !== undefined) params.end_eid = flags.endEid;
  const source = remoteRows(gateway, gateway.tablePath(flags.instance, flags.table), layout, { limit: Number(flags.limit ?? '10'), params });
  const output = new Output(process.stdout);
  try {
    // Whole rows: every CR LF is a row end (documents hold none).
    for (let chunk = await source.next(); chunk !== undefined; chunk = await source.next())
      await output.write(chunk.bytes.toString('utf8').replaceAll('\r\n', '\n'));
    await output.flush();
  } catch (e) {
    if (!(e instanceof OutputClosed)) throw e;
  } finally {
    await source.close();
  }
}
