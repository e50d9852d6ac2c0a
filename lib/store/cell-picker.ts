/**
 * Decides, cell by cell in stored order (family, qualifier, newest first), which cells of a row
 * a read returns: the selected columns, inside the time range, not expired by the locality
 * group's TTL, at most `versions` per column and never beyond the group's max_versions.
 * Stores run it before decoding a value, so unselected cells cost only their key.
 */
import { END_OF_TIME } from '../model/read/read-request.js';
import { FOREVER, type FamilyLayout, type ReadSpec, type TableLayout, type Timestamp } from '../model/types.js';

export interface FamilyPlan {
  readonly family: FamilyLayout;
  /** undefined = every qualifier of the family. */
  readonly qualifiers?: ReadonlySet<string>;
  /** Cells older than this (ms) have outlived the group's ttl_seconds. */
  readonly expiredBefore: number;
  readonly counterColumns: ReadonlySet<string> | 'all' | undefined;
  /** Declared columns of a group family; undefined for a map family (any qualifier). */
  readonly declared?: ReadonlySet<string>;
}

export class CellPicker {
  private readonly plans = new Map<string, FamilyPlan | null>();
  private curFamily = '';
  private curQualifier: string | undefined;
  private seenVersions = 0;
  private keptVersions = 0;
  private curLimit = 0;
  private curPlan: FamilyPlan | null = null;

  constructor(
    private readonly layout: TableLayout,
    private readonly read: ReadSpec,
    private readonly now: number = Date.now(),
  ) {
    const selected = new Map<string, Set<string> | undefined>();
    if (read.columns === undefined) {
      for (const name of layout.families.keys()) selected.set(name, undefined);
    } else {
      for (const c of read.columns) {
        if (c.qualifier === undefined) selected.set(c.family, undefined);
        else if (!selected.has(c.family)) selected.set(c.family, new Set([c.qualifier]));
        else selected.get(c.family)?.add(c.qualifier);
      }
    }
    for (const [name, qualifiers] of selected) {
      const family = layout.families.get(name);
      if (!family) continue;
      const expiredBefore = expiryOf(family.ttlSeconds, this.now);
      let counterColumns: FamilyPlan['counterColumns'];
      if (family.mapSchema) counterColumns = family.mapSchema.type === 'COUNTER' ? 'all' : undefined;
      else counterColumns = new Set(family.columns.filter((c) => c.schema.type === 'COUNTER').map((c) => c.name));
      const declared = family.mapSchema ? undefined : new Set(family.columns.map((c) => c.name));
      this.plans.set(name, { family, qualifiers, expiredBefore, counterColumns, declared });
    }
  }

  /** Families the read may return (for stores that can seek or filter by family). */
  get families(): string[] {
    return [...this.plans.keys()];
  }

  /** What the read returns of a family: its plan, or null when nothing (not selected, or not in the layout). */
  planOf(family: string): FamilyPlan | null {
    return this.plans.get(family) ?? null;
  }

  /** Whether the read returns column `qualifier` of a family it selects (declared in a group family, selected by `cols`). */
  static selects(plan: FamilyPlan, qualifier: string): boolean {
    return (plan.declared === undefined || plan.declared.has(qualifier)) && (plan.qualifiers === undefined || plan.qualifiers.has(qualifier));
  }

  /** Starts a new row: version counting restarts. */
  beginRow(): void {
    this.curFamily = '';
    this.curQualifier = undefined;
  }

  /** True when the cell belongs in the result. Must be called in stored order within a row. */
  keep(family: string, qualifier: string, timestamp: Timestamp): boolean {
    if (family !== this.curFamily) {
      this.curFamily = family;
      this.curPlan = this.plans.get(family) ?? null;
      this.curQualifier = undefined;
    }
    const plan = this.curPlan;
    if (plan === null) return false;
    if (qualifier !== this.curQualifier) {
      this.curQualifier = qualifier;
      this.seenVersions = 0;
      this.keptVersions = 0;
      if (!CellPicker.selects(plan, qualifier)) {
        this.curLimit = 0;
      } else {
        const isCounter = plan.counterColumns === 'all' || (plan.counterColumns instanceof Set && plan.counterColumns.has(qualifier));
        // Counters return only their latest value, whatever `versions` says (as the original did).
        this.curLimit = isCounter ? 1 : this.read.maxVersions;
      }
    }
    if (this.curLimit === 0) return false;
    this.seenVersions++;
    if (this.seenVersions > plan.family.maxVersions) return false;
    if (timestamp < plan.expiredBefore) return false;
    // maxTimestamp END_OF_TIME means unbounded: a cell at the largest timestamp is still read (as Kiji did).
    if (timestamp < this.read.minTimestamp || (timestamp >= this.read.maxTimestamp && this.read.maxTimestamp !== END_OF_TIME)) return false;
    if (this.keptVersions >= this.curLimit) return false;
    this.keptVersions++;
    return true;
  }
}

/**
 * Cells with a timestamp before this (ms) have outlived a locality group's ttl_seconds at `now`:
 * what every read hides, and what the stores' trims and counter increments treat as gone.
 */
export function expiryOf(ttlSeconds: number, now: number): number {
  return ttlSeconds >= FOREVER ? -Infinity : now - ttlSeconds * 1000;
}
