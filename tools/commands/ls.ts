/** `rowgate ls [--instance I]`: the instances of the store (or of a gateway, --url), or the tables of one, one name a line. */
import type { Command } from 'commander';
import { withRemoteOptions, withStoreOptions } from '../support/command-options.js';
import { Gateway, remotely, type RemoteFlags } from '../support/remote.js';
import { withStore, type StoreFlags } from '../support/store-options.js';

interface LsFlags extends StoreFlags, RemoteFlags {
  readonly instance?: string;
}

export function registerLs(program: Command): void {
  withRemoteOptions(withStoreOptions(program.command('ls').description('list the instances, or the tables of one instance')))
    .option('--instance <name>', 'list the tables of this instance')
    .action(async (flags: LsFlags) => {
      if (flags.url !== undefined) {
        const gateway = new Gateway(flags);
        const path = flags.instance === undefined ? '/v1/instances' : `/v1/instances/${encodeURIComponent(flags.instance)}/tables`;
        const list = await remotely(() => gateway.json<{ name: string }[]>(path));
        process.stdout.write(list.map((r) => `${r.name}\n`).join(''));
        return;
      }
      await withStore(flags, { create: false }, async ({ store }) => {
        const names = flags.instance === undefined ? await store.listInstances() : await store.listTables(flags.instance);
        process.stdout.write(names.map((n) => `${n}\n`).join(''));
      });
    });
}
