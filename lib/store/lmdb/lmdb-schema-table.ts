/**
 * The schema table of one instance, kept in the meta database. Ids are handed out inside an
 * LMDB write transaction (LMDB serializes writers across processes), after re-checking the
 * schema's hash row, so two processes never give one schema two ids or one id two schemas.
 * Both directions are cached: an id never changes its schema.
 */
import { createHash } from 'node:crypto';
import type { Database } from 'lmdb';
import type { SchemaEntry, SchemaTable } from '../../model/types.js';
import { PRE_REGISTERED_SCHEMAS } from '../../model/avro/schema-table.js';
import { guardedWrite } from './write-failures.js';

type MetaKey = (string | number)[];

function hashKey(instance: string, json: string): MetaKey {
  // Hashed: LMDB keys are limited to 1978 bytes and schemas can be longer.
  return ['schema-hash', instance, createHash('sha256').update(json).digest('hex')];
}
const idKey = (instance: string, id: number): MetaKey => ['schema-id', instance, id];
const nextKey = (instance: string): MetaKey => ['schema-next', instance];

/** Writes ids 0-7 and the counter; call inside the transaction that creates the instance. */
export function installSchemaTable(meta: Database, instance: string): void {
  PRE_REGISTERED_SCHEMAS.forEach((json, id) => {
    meta.put(idKey(instance, id), json);
    meta.put(hashKey(instance, json), id);
  });
  meta.put(nextKey(instance), PRE_REGISTERED_SCHEMAS.length);
}

export class LmdbSchemaTable implements SchemaTable {
  private readonly byId = new Map<number, string>();
  private readonly byJson = new Map<string, number>();

  constructor(
    private readonly meta: Database,
    private readonly instance: string,
    /** The data directory, for the message of a failed write. */
    private readonly path: string,
  ) {}

  async schemaOf(id: number): Promise<string | undefined> {
    return this.schemaOfSync(id);
  }

  schemaOfSync(id: number): string | undefined {
    const cached = this.byId.get(id);
    if (cached !== undefined) return cached;
    const json = this.meta.get(idKey(this.instance, id)) as string | undefined;
    if (json !== undefined) this.remember(id, json);
    return json;
  }

  async idOf(json: string): Promise<number> {
    const cached = this.byJson.get(json);
    if (cached !== undefined) return cached;
    const key = hashKey(this.instance, json);
    let id = this.meta.get(key) as number | undefined;
    if (id === undefined) {
      // Durable once transactionSync returns (commits sync, env-options.ts).
      id = await guardedWrite(
        this.path,
        'registering a schema',
        () =>
          this.meta.transactionSync(() => {
            const again = this.meta.get(key) as number | undefined;
            if (again !== undefined) return again;
            const next = this.meta.get(nextKey(this.instance)) as number;
            this.meta.put(idKey(this.instance, next), json);
            this.meta.put(key, next);
            this.meta.put(nextKey(this.instance), next + 1);
            return next;
          }) as number,
      );
    }
    this.remember(id, json);
    return id;
  }

  async entries(): Promise<SchemaEntry[]> {
    const out: SchemaEntry[] = [];
    for (const { key, value } of this.meta.getRange({ start: ['schema-id', this.instance], end: ['schema-id', this.instance, Infinity] })) {
      out.push({ id: (key as MetaKey)[2] as number, json: value as string });
    }
    return out;
  }

  private remember(id: number, json: string): void {
    this.byId.set(id, json);
    this.byJson.set(json, id);
  }
}
