/** `rowgate ls [--instance I]`: the instances of the store, or the tables of one, one name a line. */
import type { Command } from 'commander';
import { withStore, withStoreOptions, type StoreFlags } from '../support/store-options.js';

interface LsFlags extends StoreFlags {
  readonly instance?: string;
}

export function registerLs(program: Command): void {
  withStoreOptions(program.command('ls').description('list the instances, or the tables of one instance'))
    .option('--instance <name>', 'list the tables of this instance')
    .action(async (flags: LsFlags) => {
      await withStore(flags, { create: false }, async ({ store }) => {
        const names = flags.instance === undefined ? await store.listInstances() : await store.listTables(flags.instance);
        process.stdout.write(names.map((n) => `${n}\n`).join(''));
      });
    });
}
