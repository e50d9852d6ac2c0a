/**
 * The `limits.maxScans` slots: streaming responses in flight, one object shared by every request's
 * context. A scan takes a slot with acquire() and gives it back with the function it returned,
 * which does nothing on a second call (a stream's error and close paths may both end it).
 */
export class ScanSlots {
  /** Slots taken now. */
  active = 0;

  /** Takes a slot; call the returned function to give it back. */
  acquire(): () => void {
    this.active++;
    let held = true;
    return () => {
      if (!held) return;
      held = false;
      this.active--;
    };
  }
}
