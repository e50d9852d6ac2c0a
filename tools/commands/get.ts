/**
 * `rowgate get --instance I --table T --eid E`: one row as revision 3 row JSON (the document GET
 * rows?eid=E returns), followed by a newline. A missing row prints with "cells": {}.
 */
import type { Command } from 'commander';
import { rowSerializer } from '../../lib/http/row-format.js';
import { withStore, withStoreOptions, type StoreFlags } from '../support/store-options.js';
import { readSpecOf, rowKeyOf, withReadOptions, type ReadFlags } from '../support/read-options.js';

interface GetFlags extends StoreFlags, ReadFlags {
  readonly instance: string;
  readonly table: string;
  readonly eid: string;
}

export function registerGet(program: Command): void {
  const cmd = withStoreOptions(program.command('get').description('print one row as JSON'))
    .requiredOption('--instance <name>', 'instance')
    .requiredOption('--table <name>', 'table')
    .requiredOption('--eid <eid>', 'entity id: a JSON array such as [1234] or ["a", 2], or rowkey=... / rowkey_hex=...');
  withReadOptions(cmd, '1').action(async (flags: GetFlags) => {
    await withStore(flags, { create: false }, async ({ store }) => {
      const layout = await store.getLayout(flags.instance, flags.table);
      const read = readSpecOf(layout, flags);
      const [row] = await store.get(flags.instance, flags.table, [rowKeyOf(layout, flags.eid, store.maxRowKeyBytes, '--eid')], read);
      process.stdout.write(`${rowSerializer(layout.keyFormat, 3)(row!)}\n`);
    });
  });
}
