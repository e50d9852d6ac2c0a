/**
 * The in-flight write budget (limits.writeBudgetBytes): the bytes of POST bodies this process holds
 * from their first byte read until their commit. A body's rows wait packed and are then written in
 * one transaction whose dirty pages LMDB keeps in memory until the commit: a 9.5 MB POST of 150,000
 * small rows raised resident memory by about 10x its bytes, and concurrent ones add up. A POST that
 * would take the total past the budget is answered 503 RG_ERR_TOO_MANY_WRITES with Retry-After,
 * before anything of it is written. A POST alone is always taken (up to limits.bodyBytes): a body
 * larger than the budget goes through when nothing else is being written, so the budget bounds
 * what concurrent bodies hold, never which bodies can be written at all.
 */
import { rgError } from '../errors.js';

export class WriteBudget {
  private held = 0;

  /** Bytes of bodies held now, every lease together. */
  get inFlight(): number {
    return this.held;
  }

  lease(limit: number): WriteLease {
    return new WriteLease(this, limit);
  }

  /** @internal WriteLease's accounting. */
  add(bytes: number): void {
    this.held += bytes;
  }
}

/** One POST's share of the budget: taken as its body is read, given back once (release) when it is done. */
export class WriteLease {
  private bytes = 0;
  private released = false;

  constructor(
    private readonly budget: WriteBudget,
    private readonly limit: number,
  ) {}

  /** Takes `bytes` more; throws RG_ERR_TOO_MANY_WRITES when other POSTs hold bytes and the total would pass the limit. */
  take(bytes: number): void {
    const others = this.budget.inFlight - this.bytes;
    if (others > 0 && this.budget.inFlight + bytes > this.limit) {
      throw rgError(
        'RG_ERR_TOO_MANY_WRITES',
        `POST bodies of ${others} bytes are being written and this one would take them past limits.writeBudgetBytes (${this.limit}); retry shortly`,
      );
    }
    this.bytes += bytes;
    this.budget.add(bytes);
  }

  release(): void {
    if (this.released) return;
    this.released = true;
    this.budget.add(-this.bytes);
    this.bytes = 0;
  }
}

const budgets = new WeakMap<object, WriteBudget>();

/** The budget of a gateway (one per AppContext: every request of the process shares it). */
export function writeBudgetOf(ctx: object): WriteBudget {
  let budget = budgets.get(ctx);
  if (budget === undefined) budgets.set(ctx, (budget = new WriteBudget()));
  return budget;
}
