import type { PassOver } from '../../db/queries/publishing.js';

/**
 * The publications one worker has in flight, by user and by platform host. A claim holds a place
 * for each target it takes (`hold`) and passes over a target whose user or host has its share:
 * that target stays due, and is taken once one of theirs settles (`settled` wakes the lanes). So a
 * tenant whose platform answers slowly holds at most its share of a worker, never its lanes: each
 * call settles on its own, tracked here (`track`) rather than awaited by the lane that took it.
 */
export class InFlight {
  private readonly users = new Map<string, number>();
  private readonly hosts = new Map<string, number>();
  /** The accounts a claim has seen on each host with calls in flight, so the next claim passes their posts over while it is full. */
  private readonly accountsOf = new Map<string, Set<string>>();
  private readonly calls = new Set<Promise<void>>();

  constructor(
    private readonly caps: { perUser: number; perHost: number },
    private readonly settled: () => void,
  ) {}

  /** Places held: calls in flight, and taken by a claim not yet handed over. */
  get held(): number {
    let n = 0;
    for (const count of this.users.values()) n += count;
    return n;
  }

  /** Holds a place for a call of this user's to this host, or null when either has its share (the target then stays due). */
  hold(userId: string, host: string, accountId: string): (() => void) | null {
    const onHost = this.hosts.get(host) ?? 0;
    // Kept only while the host has calls in flight (released with its last one).
    if (onHost > 0) this.accountsOf.get(host)?.add(accountId);
    if ((this.users.get(userId) ?? 0) >= this.caps.perUser || onHost >= this.caps.perHost) return null;
    if (onHost === 0) this.accountsOf.set(host, new Set([accountId]));
    this.users.set(userId, (this.users.get(userId) ?? 0) + 1);
    this.hosts.set(host, onHost + 1);
    let released = false;
    return () => {
      if (released) return;
      released = true;
      this.release(this.users, userId);
      if (this.release(this.hosts, host) === 0) this.accountsOf.delete(host);
      this.settled();
    };
  }

  /** The posts a claim passes over now: those of users, and on hosts, that have their share in flight. */
  passOver(): PassOver {
    return {
      userIds: [...this.users].filter(([, n]) => n >= this.caps.perUser).map(([id]) => id),
      accountIds: [...this.hosts].filter(([, n]) => n >= this.caps.perHost).flatMap(([host]) => [...(this.accountsOf.get(host) ?? [])]),
    };
  }

  /** Keeps a publication until it settles (it never rejects), so a stopping worker can wait for it. */
  track(call: Promise<void>): void {
    const tracked = call.finally(() => this.calls.delete(tracked));
    this.calls.add(tracked);
  }

  /** Resolves once every publication in flight has settled. */
  async idle(): Promise<void> {
    while (this.calls.size > 0) await Promise.all([...this.calls]);
  }

  private release(counts: Map<string, number>, key: string): number {
    const left = (counts.get(key) ?? 1) - 1;
    if (left <= 0) counts.delete(key);
    else counts.set(key, left);
    return left;
  }
}
