/**
 * Layouts of the demo instance created on a fresh data directory (docs/cli.md, "serve"), as Kiji layout
 * JSON text so they go through parseLayout like any user layout.
 */

/**
 * `users`: one LONG key component with a 2-byte hash prefix; typed columns (string, int, double,
 * an array and a record) and a map family of counters.
 */
export const USERS_LAYOUT_JSON = `{
  // Demo table served by a fresh rowgate data directory.
  name: "users",
  description: "Demo users: profile columns and per-site login counters.",
  keys_format: {
    encoding: "FORMATTED",
    salt: { hash_size: 2 },
    components: [ { name: "uid", type: "LONG" } ]
  },
  locality_groups: [ {
    name: "default",
    description: "All demo data, 5 versions kept forever.",
    in_memory: false,
    max_versions: 5,
    ttl_seconds: 2147483647,
    compression_type: "NONE",
    families: [ {
      name: "info",
      description: "User profile.",
      columns: [
        { name: "name", column_schema: { storage: "UID", type: "INLINE", value: '"string"' } },
        { name: "email", column_schema: { storage: "UID", type: "INLINE", value: '"string"' } },
        { name: "age", column_schema: { storage: "UID", type: "INLINE", value: '"int"' } },
        { name: "score", column_schema: { storage: "UID", type: "INLINE", value: '"double"' } },
        { name: "tags", column_schema: { storage: "UID", type: "INLINE", value: '{"type": "array", "items": "string"}' } },
        { name: "address", column_schema: { storage: "UID", type: "INLINE",
          value: '{"type": "record", "name": "Address", "namespace": "org.rowgate.demo", "fields": [{"name": "street", "type": "string"}, {"name": "city", "type": "string"}, {"name": "zip", "type": ["null", "string"], "default": null}]}' } }
      ]
    }, {
      name: "logins",
      description: "Map from site name to the number of logins there.",
      map_schema: { type: "COUNTER", storage: "FINAL" }
    } ]
  } ],
  version: "layout-1.3.0"
}
`;

/** Every demo table's layout JSON by table name. */
export const DEMO_LAYOUTS: Readonly<Record<string, string>> = { users: USERS_LAYOUT_JSON };
