/**
 * `rowgate create-table --instance I --layout FILE.json`: creates the instance when it is new, then
 * the table the layout describes (Kiji TableLayoutDesc JSON; comments and single quotes accepted).
 */
import { readFileSync } from 'node:fs';
import type { Command } from 'commander';
import { parseLayout } from '../../lib/model/layout/layout.js';
import { CliError } from '../support/cli-error.js';
import { withStoreOptions } from '../support/command-options.js';
import { withStore, type StoreFlags } from '../support/store-options.js';

interface CreateTableFlags extends StoreFlags {
  readonly instance: string;
  readonly layout: string;
}

export function registerCreateTable(program: Command): void {
  withStoreOptions(program.command('create-table').description('create a table from a layout file (and its instance when new)'))
    .requiredOption('--instance <name>', 'instance to create the table in (created when it does not exist)')
    .requiredOption('--layout <file>', 'table layout: Kiji TableLayoutDesc JSON (the table name comes from its name field)')
    .action(async (flags: CreateTableFlags) => {
      let text: string;
      try {
        text = readFileSync(flags.layout, 'utf8');
      } catch (e) {
        throw new CliError(`cannot read layout file ${flags.layout}: ${(e as Error).message}`);
      }
      const layout = parseLayout(text);
      await withStore(flags, { create: true }, async ({ store }) => {
        if (!(await store.listInstances()).includes(flags.instance)) {
          await store.createInstance(flags.instance);
          process.stdout.write(`created instance ${flags.instance}\n`);
        }
        await store.createTable(flags.instance, layout);
        const families = [...layout.families.keys()].join(', ');
        process.stdout.write(`created table ${layout.name} in instance ${flags.instance} (key format ${layout.keyFormat.encoding}; families ${families})\n`);
      });
    });
}
