/**
 * The platforms Herald publishes to for real, one descriptor each: how an account connects and
 * which credentials it takes. The connect rules, the operator CLI's flags and the registry of
 * publishers all come from this list (the registry's type requires a publisher for every id),
 * and a test holds the spec's AccountCredentials to it.
 */

export interface CredentialField {
  /** The key in `credentials` (and, in kebab case, the CLI flag). */
  key: string;
  /** What the operator CLI says of its flag. */
  help: string;
  /** Read from stdin when the CLI is given `-`, so it stays out of the shell's history. */
  secret: boolean;
}

export interface LivePlatform {
  id: string;
  /** How an account connects: with credentials a person pastes (an app password, a token). */
  connects: 'credentials';
  credentials: readonly CredentialField[];
  /** The credential naming the server Herald will call, checked by the SSRF guard before connecting. */
  serviceKey: string;
}

export const LIVE_PLATFORMS = [
  {
    id: 'bluesky',
    connects: 'credentials',
    serviceKey: 'service',
    credentials: [
      { key: 'service', help: 'Bluesky: the PDS, e.g. https://bsky.social', secret: false },
      { key: 'identifier', help: 'Bluesky: handle, DID or email', secret: false },
      { key: 'appPassword', help: "Bluesky: an app password, or '-' to read it from stdin", secret: true },
    ],
  },
  {
    id: 'mastodon',
    connects: 'credentials',
    serviceKey: 'instance',
    credentials: [
      { key: 'instance', help: 'Mastodon: the instance, e.g. https://mastodon.social', secret: false },
      { key: 'accessToken', help: "Mastodon: an access token, or '-' to read it from stdin", secret: true },
    ],
  },
] as const satisfies readonly LivePlatform[];

export type LivePlatformId = (typeof LIVE_PLATFORMS)[number]['id'];

export function livePlatform(id: string): LivePlatform | undefined {
  return LIVE_PLATFORMS.find((platform) => platform.id === id);
}

/** Every credential key any live platform takes, each once, in the order of the list. */
export function credentialFields(): CredentialField[] {
  const seen = new Map<string, CredentialField>();
  for (const platform of LIVE_PLATFORMS) for (const field of platform.credentials) if (!seen.has(field.key)) seen.set(field.key, field);
  return [...seen.values()];
}
