/**
 * The tables every gateway test starts with, and what reads their responses: shared by the gateway
 * on a real socket (test/http/harness.ts) and the one checked in process (test/support/in-process.ts).
 * `sample_table` (one LONG component) and `players` (two STRINGs) are the fixture tables of
 * KijiREST's own tests; `raw_table` holds row keys of any bytes.
 */
import { parseLayout } from '../../lib/model/layout/layout.js';
import type { Store } from '../../lib/store/store.js';

export const SAMPLE_LAYOUT = `{
  name: "sample_table",
  keys_format: {encoding: "FORMATTED", salt: {hash_size: 2}, components: [{name: "id", type: "LONG"}]},
  locality_groups: [{
    name: "default", in_memory: false, max_versions: 10, ttl_seconds: 2147483647, compression_type: "NONE",
    families: [
      {name: "group_family", columns: [
        {name: "string_qualifier", column_schema: {storage: "UID", type: "INLINE", value: '"string"'}},
        {name: "long_qualifier", column_schema: {storage: "UID", type: "INLINE", value: '"long"'}},
        {name: "union_qualifier", column_schema: {storage: "UID", type: "INLINE", value: '["string", "null"]'}},
        {name: "inline_record", column_schema: {storage: "UID", type: "INLINE",
          value: '{"type": "record", "name": "Rec", "fields": [{"name": "username", "type": "string"}, {"name": "num_purchases", "type": "long"}, {"name": "nick", "type": ["null", "string"], "default": null}]}'}},
        {name: "counter", column_schema: {type: "COUNTER", storage: "FINAL"}}
      ]},
      {name: "strings", map_schema: {storage: "UID", type: "INLINE", value: '"string"'}},
      {name: "longs", map_schema: {storage: "UID", type: "INLINE", value: '"long"'}}
    ]
  }],
  version: "layout-1.3.0"
}`;

export const PLAYERS_LAYOUT = `{
  name: "players",
  keys_format: {encoding: "FORMATTED", salt: {hash_size: 2}, components: [{name: "name", type: "STRING"}, {name: "domain", type: "STRING"}]},
  locality_groups: [{
    name: "default", in_memory: false, max_versions: 3, ttl_seconds: 2147483647, compression_type: "NONE",
    families: [{name: "info", columns: [
      {name: "email", column_schema: {storage: "UID", type: "INLINE", value: '"string"'}},
      {name: "logins", column_schema: {type: "COUNTER", storage: "FINAL"}}
    ]}]
  }],
  version: "layout-1.3.0"
}`;

/** A RAW-key table `raw_table` (map family `info` of strings), for row keys of any bytes. */
export const RAW_TABLE_LAYOUT = {
  name: 'raw_table',
  keys_format: { encoding: 'RAW' },
  locality_groups: [
    {
      name: 'default',
      in_memory: false,
      max_versions: 5,
      ttl_seconds: 2147483647,
      compression_type: 'NONE',
      families: [{ name: 'info', map_schema: { storage: 'UID', type: 'INLINE', value: '"string"' } }],
    },
  ],
  version: 'layout-1.0.0',
};

/** The info routes' GET paths, down to the fixture table sample_table. */
export const INFO_PATHS: readonly string[] = [
  '/v1',
  '/v1/version',
  '/v1/openapi.json',
  '/v1/instances',
  '/v1/instances/default',
  '/v1/instances/default/tables',
  '/v1/instances/default/tables/sample_table',
];

export interface RawResponse {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: string;
}

export const json = { 'content-type': 'application/json' };

/** Splits a row stream body into parsed rows, checking the CR LF framing on the way. */
export function rowsOf(body: string): unknown[] {
  if (body === '') return [];
  if (!body.endsWith('\r\n')) throw new Error(`row stream does not end with CR LF: ${JSON.stringify(body.slice(-20))}`);
  return body
    .slice(0, -2)
    .split('\r\n')
    .map((line) => JSON.parse(line) as unknown);
}

/** The instances (`default`, `hidden`) and tables (`sample_table`, `players`) a gateway test starts with. */
export async function createFixtures(store: Store): Promise<void> {
  await store.createInstance('default');
  await store.createInstance('hidden');
  await store.createTable('default', parseLayout(SAMPLE_LAYOUT));
  await store.createTable('default', parseLayout(PLAYERS_LAYOUT));
}
