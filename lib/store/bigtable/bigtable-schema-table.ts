/**
 * The schema table of one instance, kept in the meta table so every gateway shares it:
 *
 *   schema/<instance>/next            m:n    8-byte counter, ReadModifyWrite-incremented
 *   schema/<instance>/id/<0000000008> m:json the schema of an id
 *   schema/<instance>/hash/<sha256>   m:id   the id of a schema (decimal)
 *
 * A new schema takes a fresh number from the counter (so no two schemas ever draw one id), writes
 * its id row, then claims the hash row with CheckAndMutate (applied only if the row is empty).
 * When another gateway claimed the hash first, the loser deletes its id row and uses the winner's
 * id: one id per schema, one schema per id; the lost number is a gap. Ids 0-7 are the
 * pre-registered schemas and are not stored.
 */
import { createHash } from 'node:crypto';
import { rgError } from '../../errors.js';
import { FIRST_USER_SCHEMA_ID, PRE_REGISTERED_SCHEMAS } from '../../model/avro/schema-table.js';
import type { SchemaEntry, SchemaTable } from '../../model/types.js';
import type { MetaTable } from './meta-table.js';

const idRow = (instance: string, id: number): string => `schema/${instance}/id/${String(id).padStart(10, '0')}`;
const hashRow = (instance: string, json: string): string => `schema/${instance}/hash/${createHash('sha256').update(json).digest('hex')}`;

export class BigtableSchemaTable implements SchemaTable {
  private readonly byId = new Map<number, string>();
  private readonly byJson = new Map<string, number>();

  constructor(
    private readonly meta: MetaTable,
    private readonly instance: string,
  ) {
    PRE_REGISTERED_SCHEMAS.forEach((json, id) => this.remember(id, json));
  }

  async schemaOf(id: number): Promise<string | undefined> {
    const cached = this.byId.get(id);
    if (cached !== undefined) return cached;
    if (!Number.isInteger(id) || id < FIRST_USER_SCHEMA_ID) return undefined;
    const row = await this.meta.get(idRow(this.instance, id));
    const json = row?.get('json')?.toString('utf8');
    // An id row whose hash row names another id lost a registration race and is being removed.
    if (json === undefined || (await this.idOfStored(json)) !== id) return undefined;
    this.remember(id, json);
    return json;
  }

  async idOf(json: string): Promise<number> {
    const cached = this.byJson.get(json);
    if (cached !== undefined) return cached;
    let id = await this.idOfStored(json);
    if (id === undefined) {
      const [counter] = await this.meta.increment(`schema/${this.instance}/next`, 'n', 1n);
      id = FIRST_USER_SCHEMA_ID + Number(counter!) - 1;
      await this.meta.set(idRow(this.instance, id), { json: Buffer.from(json, 'utf8') });
      const claimed = await this.meta.createIfAbsent(hashRow(this.instance, json), { id: Buffer.from(String(id)) });
      if (!claimed) {
        await this.meta.remove(idRow(this.instance, id));
        id = await this.idOfStored(json);
        if (id === undefined) throw rgError('RG_ERR_INTERNAL', `schema registration in instance ${this.instance} lost a race and found no winner`);
      }
    }
    this.remember(id, json);
    return id;
  }

  async entries(): Promise<SchemaEntry[]> {
    const out: SchemaEntry[] = PRE_REGISTERED_SCHEMAS.map((json, id) => ({ id, json }));
    for (const { key, cells } of await this.meta.scanPrefix(`schema/${this.instance}/id/`)) {
      const id = Number(key.slice(key.lastIndexOf('/') + 1));
      const json = cells.get('json')?.toString('utf8');
      if (json === undefined) continue;
      // Only ids whose hash row points back at them (a race loser's row may linger briefly).
      if ((this.byJson.get(json) ?? (await this.idOfStored(json))) === id) out.push({ id, json });
    }
    return out;
  }

  private async idOfStored(json: string): Promise<number | undefined> {
    const pre = PRE_REGISTERED_SCHEMAS.indexOf(json);
    if (pre >= 0) return pre;
    const row = await this.meta.get(hashRow(this.instance, json));
    const text = row?.get('id')?.toString('utf8');
    return text === undefined ? undefined : Number(text);
  }

  private remember(id: number, json: string): void {
    this.byId.set(id, json);
    this.byJson.set(json, id);
  }
}
