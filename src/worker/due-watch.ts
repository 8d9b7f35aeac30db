/**
 * Runs `look` when work comes due, never two at once: at the time the last look returned (the
 * soonest due time it found, or when to look again anyway), or sooner when told of work due
 * sooner. A time heard while a look runs is kept for after it, since the look may have read the
 * database before that work was committed.
 */
export class DueWatch {
  private timer: NodeJS.Timeout | undefined;
  private planned = Number.POSITIVE_INFINITY;
  private heardWhileLooking = Number.POSITIVE_INFINITY;
  private looking: Promise<void> | undefined;
  private stopped = false;

  /** `look` does what is due and resolves with when to look next, in ms since the epoch by `now`; `onError` hears a look that failed, which is tried again after `retryMs`. */
  constructor(
    private readonly look: () => Promise<number>,
    private readonly onError: (error: unknown) => void,
    private readonly retryMs: number,
    private readonly now: () => number,
  ) {}

  /** Work comes due at `at` (ms since the epoch): look then, unless a look is planned sooner. */
  dueAt(at: number): void {
    if (this.stopped) return;
    if (this.looking !== undefined) this.heardWhileLooking = Math.min(this.heardWhileLooking, at);
    else if (at < this.planned) this.plan(at);
  }

  /** Stops planning looks and waits for the one running. */
  async stop(): Promise<void> {
    this.stopped = true;
    clearTimeout(this.timer);
    await this.looking;
  }

  private plan(at: number): void {
    clearTimeout(this.timer);
    this.planned = at;
    // One millisecond late rather than early: a timer may fire within the millisecond it was due, before a due time equal to it.
    this.timer = setTimeout(() => this.run(), Math.max(0, at - this.now() + 1));
    this.timer.unref();
  }

  private run(): void {
    this.planned = Number.POSITIVE_INFINITY;
    this.looking = this.look()
      .catch((error: unknown) => {
        this.onError(error);
        return this.now() + this.retryMs;
      })
      .then((next) => {
        const heard = this.heardWhileLooking;
        this.heardWhileLooking = Number.POSITIVE_INFINITY;
        this.looking = undefined;
        if (!this.stopped) this.plan(Math.min(next, heard));
      });
  }
}
