/**
 * `rowgate get --instance I --table T --eid E`: one row as revision 3 row JSON (the document GET
 * rows?eid=E returns), followed by a newline. A missing row prints with "cells": {}.
 */
import type { Command } from 'commander';
import { rowSerializer } from '../../lib/rows/row-format.js';
import { withReadOptions, withRemoteOptions, withStoreOptions } from '../support/command-options.js';
import { withStore, type StoreFlags } from '../support/store-options.js';
import { readSpecOf, rowKeyOf, type ReadFlags } from '../support/read-options.js';
import { Gateway, remotely, type RemoteFlags } from '../support/remote.js';
import { readParams } from '../support/remote-rows.js';

interface GetFlags extends StoreFlags, ReadFlags, RemoteFlags {
  readonly instance: string;
  readonly table: string;
  readonly eid: string;
}

export function registerGet(program: Command): void {
  const cmd = withRemoteOptions(
    withStoreOptions(program.command('get').description('print one row as JSON'))
      .requiredOption('--instance <name>', 'instance')
      .requiredOption('--table <name>', 'table')
      .requiredOption('--eid <eid>', 'entity id: a JSON array such as [1234] or ["a", 2], or rowkey=... / rowkey_hex=...'),
  );
  withReadOptions(cmd, '1').action(async (flags: GetFlags) => {
    if (flags.url !== undefined) {
      // GET rows?eid=E answers the row followed by CR LF; printed with LF, as locally.
      const gateway = new Gateway(flags);
      const q = new URLSearchParams({ ...readParams(flags), eid: flags.eid });
      const body = await remotely(() => gateway.text(`${gateway.tablePath(flags.instance, flags.table)}/rows?${q.toString()}`));
      process.stdout.write(body.replace(/\r\n$/, '\n'));
      return;
    }
    await withStore(flags, { create: false }, async ({ store }) => {
      const layout = await store.getLayout(flags.instance, flags.table);
      const read = readSpecOf(layout, flags);
      const [row] = await store.get(flags.instance, flags.table, [rowKeyOf(layout, flags.eid, store.maxRowKeyBytes, '--eid')], read);
      process.stdout.write(`${rowSerializer(layout.keyFormat, 3)(row!)}\n`);
    });
  });
}
