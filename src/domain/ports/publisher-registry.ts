import type { Publisher } from './publisher.js';

/** Which publisher serves an account: the sandbox for sandbox accounts, the platform's client for live ones. */
export interface PublisherRegistry {
  for(account: { mode: 'sandbox' | 'live'; platform: string }): Publisher | undefined;
}

export function createPublisherRegistry(sandbox: Publisher, live: Readonly<Record<string, Publisher>>): PublisherRegistry {
  return {
    for: (account) => (account.mode === 'sandbox' ? sandbox : live[account.platform]),
  };
}
