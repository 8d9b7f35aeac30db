import { LRUCache } from 'lru-cache';
import type { DatabaseHandle } from '../data/database.js';
import type { StopListening } from '../data/notifications.js';
import { API_KEY_CHANGES_CHANNEL, type ApiKeyLookup } from '../data/queries/api-keys.js';

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
  #hearing = false;
  #changes = 0;

  get(keyHash: string): ApiKeyLookup | undefined {
    return this.#hearing ? this.#entries.get(keyHash) : undefined;
  }

  /** A mark to give `keep`: taken before the lookup, so a change announced during it is not overtaken. */
  mark(): number {
    return this.#changes;
  }

  keep(keyHash: string, row: ApiKeyLookup, mark: number): void {
    if (this.#hearing && mark === this.#changes) this.#entries.set(keyHash, row);
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

/**
 * A key cache fed by the database's announcements of key changes, or undefined where the handle
 * cannot hear them (then every request looks its key up).
 */
export async function watchApiKeys(handle: DatabaseHandle): Promise<{ cache: ApiKeyCache | undefined; stop: StopListening }> {
  if (handle.listen === undefined) return { cache: undefined, stop: async () => {} };
  const cache = new ApiKeyCache();
  const stop = await handle.listen(API_KEY_CHANGES_CHANNEL, {
    notified: () => cache.changed(),
    listening: () => cache.hearing(true),
    deaf: () => cache.hearing(false),
  });
  return { cache, stop };
}
