import { LRUCache } from 'lru-cache';
import type { DatabaseHandle } from '../db/database.js';
import type { StopListening } from '../db/notifications.js';
import { API_KEY_CHANGES_CHANNEL, type ApiKeyLookup } from '../db/queries/api-keys.js';

/**
 * How long a looked-up key is used without asking the database again. A change to a key does not
 * wait for it (the database announces each change as it commits); this only bounds how long a
 * server could miss an announcement without noticing that its connection had gone.
 */
const KEY_CACHE_MS = 1000;
/** Keys kept at most: more than the distinct keys one server sees in a second. */
const KEY_CACHE_ENTRIES = 10_000;

/**
 * Keys as they were last looked up, by hash, so that a client's requests do not each begin with the
 * same lookup. Trusted only while the database's announcements of key changes are heard: every change
 * empties it, and so does losing them (while deaf, every request looks its key up).
 */
export class ApiKeyCache {
  readonly #entries = new LRUCache<string, ApiKeyLookup>({ max: KEY_CACHE_ENTRIES, ttl: KEY_CACHE_MS });
  readonly #running = new Map<string, { mark: number; row: Promise<ApiKeyLookup | undefined> }>();
  #hearing = false;
  #changes = 0;

  get(keyHash: string): ApiKeyLookup | undefined {
    return this.#hearing ? this.#entries.get(keyHash) : undefined;
  }

  /** How many changes it has heard: a mark that moves at each announcement, and when it stops or starts hearing them. */
  mark(): number {
    return this.#changes;
  }

  /**
   * Looks a key up with `load` and keeps what it found, unless a change was announced while it ran.
   * Requests that ask for the same key meanwhile share the lookup rather than each making their own:
   * when a busy key's entry lapses, every request in that moment would otherwise queue its own
   * lookup, and the requests behind them wait for all of them (50 connections on one key made 23
   * lookups a second rather than 1). A lookup begun before a change is not shared after it, nor
   * any while the announcements are not heard.
   */
  async lookUp(keyHash: string, load: () => Promise<ApiKeyLookup | undefined>): Promise<ApiKeyLookup | undefined> {
    const running = this.#running.get(keyHash);
    if (running !== undefined && this.#hearing && running.mark === this.#changes) return running.row;
    const lookup = { mark: this.#changes, row: load() };
    this.#running.set(keyHash, lookup);
    try {
      const row = await lookup.row;
      if (row !== undefined && this.#hearing && lookup.mark === this.#changes) this.#entries.set(keyHash, row);
      return row;
    } finally {
      if (this.#running.get(keyHash) === lookup) this.#running.delete(keyHash);
    }
  }

  changed(): void {
    this.#changes++;
    this.#entries.clear();
  }

  hearing(hearing: boolean): void {
    this.changed();
    this.#hearing = hearing;
  }
}

/** A key cache fed by the database's announcements of key changes. */
export async function watchApiKeys(handle: DatabaseHandle): Promise<{ cache: ApiKeyCache; stop: StopListening }> {
  const cache = new ApiKeyCache();
  const stop = await handle.listen(API_KEY_CHANGES_CHANNEL, {
    notified: () => cache.changed(),
    listening: () => cache.hearing(true),
    deaf: () => cache.hearing(false),
  });
  return { cache, stop };
}
