/** The read-only resources: root, version, instances, one instance's metadata, tables, a layout. */
import { createHash } from 'node:crypto';
import { REST_VERSION } from '../../version.js';
import { DATA_VERSION } from '../../store/store.js';
import { requireVisible, tableLayout, visibleInstances, type Handler } from '../context.js';
import { sendJson } from '../respond.js';
import { serialize } from '../serializers.js';

export const SERVICE_NAME = 'rowgate';

export const getRoot: Handler = async (ctx, req, res) => {
  sendJson(ctx, req, res, 200, serialize.root({ resources: ['version', 'instances', 'openapi.json'], service: SERVICE_NAME }));
};

/** "system-2.0" -> the ProtocolVersion fields of the original (docs/data-model.md, "Instances and versions"). */
function protocolVersion(text: string): { protocolName: string; majorVersion: number; minorVersion: number; revision: number } {
  const [name, numbers = ''] = text.split('-');
  const [major = 0, minor = 0, revision = 0] = numbers.split('.').map(Number);
  return { protocolName: name!, majorVersion: major, minorVersion: minor, revision };
}

export const getVersion: Handler = async (ctx, req, res) => {
  sendJson(
    ctx,
    req,
    res,
    200,
    serialize.version({
      'service-client-data-version': protocolVersion(DATA_VERSION),
      'rest-version': REST_VERSION,
      'service-software-version': REST_VERSION,
    }),
  );
};

export const getInstances: Handler = async (ctx, req, res) => {
  const names = await visibleInstances(ctx);
  sendJson(ctx, req, res, 200, serialize.resourceList(names.map((name) => ({ name, uri: `/v1/instances/${name}` }))));
};

/** Latin-1 text of bytes: how Avro's JSON encoding writes `fixed` and `bytes`. */
const latin1 = (b: Buffer): string => b.toString('latin1');

/** The instance's metadata in the shape of the original's MetadataBackup (docs/interface.md, "The info resources"). */
export const getInstance: Handler = async (ctx, req, res, params) => {
  const instance = params.instance!;
  requireVisible(ctx, instance);
  const meta = await ctx.store.instanceMetadata(instance);
  const tables: Record<string, unknown> = {};
  for (const t of meta.tables) {
    tables[t.name] = {
      name: t.name,
      table_layouts_backup: { layouts: [{ layout: t.layout }] },
      key_value_backup: { key_values: [] },
    };
  }
  const body = {
    layout_version: meta.dataVersion,
    system_table: { entries: [{ key: 'data-version', value: meta.dataVersion }] },
    schema_table: {
      entries: meta.schemaTable.map((e) => ({ id: e.id, hash: latin1(createHash('md5').update(e.json).digest()), avro_schema: e.json })),
    },
    meta_table: { tables },
  };
  sendJson(ctx, req, res, 200, serialize.instanceMetadata(body));
};

export const getTables: Handler = async (ctx, req, res, params) => {
  const instance = params.instance!;
  requireVisible(ctx, instance);
  const names = await ctx.store.listTables(instance);
  sendJson(ctx, req, res, 200, serialize.resourceList(names.map((name) => ({ name, uri: `/v1/instances/${instance}/tables/${name}` }))));
};

export const getTable: Handler = async (ctx, req, res, params) => {
  const layout = await tableLayout(ctx, params);
  sendJson(ctx, req, res, 200, JSON.stringify(layout.desc));
};
