/**
 * `rowgate scan --instance I --table T [--limit N]`: a quick look at the first rows (10 by default;
 * those of a key range, or those a wildcard --eid matches, or one row), one revision 3 row JSON
 * document a line.
 */
import type { Command } from 'commander';
import { Output, OutputClosed } from '../support/output.js';
import { dumpRows } from '../support/row-dump.js';
import { selectionOf, withScanOptions, type ScanFlags } from '../support/read-options.js';
import { withStore, withStoreOptions, type StoreFlags } from '../support/store-options.js';

interface ScanCommandFlags extends StoreFlags, ScanFlags {
  readonly instance: string;
  readonly table: string;
}

export function registerScan(program: Command): void {
  const cmd = withStoreOptions(program.command('scan').description('print the first rows of a table, one JSON document a line'))
    .requiredOption('--instance <name>', 'instance')
    .requiredOption('--table <name>', 'table');
  withScanOptions(cmd, '10', '1').action(async (flags: ScanCommandFlags) => {
    await withStore(flags, { create: false }, async ({ store }) => {
      const layout = await store.getLayout(flags.instance, flags.table);
      const output = new Output(process.stdout);
      try {
        await dumpRows({ store, instance: flags.instance, table: flags.table, layout, selection: selectionOf(layout, flags, store.maxRowKeyBytes), output, terminator: '\n' });
        await output.flush();
      } catch (e) {
        if (!(e instanceof OutputClosed)) throw e;
      }
    });
  });
}
