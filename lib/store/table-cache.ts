/**
 * What a store keeps of its open tables, by instance and table name, and the one rule by which
 * Store.forget drops it: one table's entry, or every table of an instance.
 */
export class TableCache<T> {
  private readonly entries = new Map<string, T>();

  get(instance: string, table: string): T | undefined {
    return this.entries.get(`${instance}/${table}`);
  }

  set(instance: string, table: string, value: T): void {
    this.entries.set(`${instance}/${table}`, value);
  }

  /** Drops the entry of `table`, or without one every entry of the instance. */
  forget(instance: string, table?: string): void {
    if (table !== undefined) {
      this.entries.delete(`${instance}/${table}`);
      return;
    }
    for (const id of this.entries.keys()) if (id.startsWith(`${instance}/`)) this.entries.delete(id);
  }
}
