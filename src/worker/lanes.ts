/** What one step of a lane found: nothing due, nothing to take after all (it looks again), or work taken, done by calling it. */
export type Step = 'none' | 'settled' | (() => Promise<void>);

/**
 * Runs one kind of work, up to `size` pieces at a time. A lane takes work again and again until it
 * finds none; one that takes work starts another beside it while there is room, so lanes grow with
 * the work, and waking them when nothing is due costs one look. Lanes never wait for each other:
 * one held by slow work leaves the others taking what comes due.
 */
export class Lanes {
  private readonly running = new Set<Promise<void>>();
  private wakes = 0;
  private stopped = false;

  /** `onError` hears a step that threw; that lane ends, and the next wake starts another. */
  constructor(
    private readonly size: number,
    private readonly step: () => Promise<Step>,
    private readonly onError: (error: unknown) => void,
  ) {}

  /** Work may be due now: starts a lane if there is room. */
  wake(): void {
    this.wakes += 1;
    this.start();
  }

  /** Starts no more lanes and waits for those running to finish the work in hand. */
  async stop(): Promise<void> {
    this.stopped = true;
    await Promise.all([...this.running]);
  }

  private start(): void {
    if (this.stopped || this.running.size >= this.size) return;
    const lane: Promise<void> = this.run().finally(() => this.running.delete(lane));
    this.running.add(lane);
  }

  private async run(): Promise<void> {
    try {
      while (!this.stopped) {
        const wakes = this.wakes;
        const step = await this.step();
        if (step === 'settled') continue;
        if (step === 'none') {
          // A wake while this lane looked may be for work its look missed, and found no room for a lane of its own.
          if (this.wakes === wakes) return;
          continue;
        }
        this.start();
        await step();
      }
    } catch (error) {
      this.onError(error);
    }
  }
}
