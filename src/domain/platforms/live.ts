import type { ErrorDetail, Platform } from '../api-types.js';
import { platformRules } from './table/index.js';

/**
 * The platforms Herald publishes to for real, one descriptor each: how an account connects and
 * which credentials it takes. The connect rules, the platform list's `connect`, the operator
 * CLI's flags and the registry of publishers all come from this list (the registry's type
 * requires a publisher for every id), and a test holds the spec's AccountCredentials to it.
 */

export interface CredentialField {
  /** The key in `credentials` (and, in kebab case, the CLI flag). */
  key: string;
  /** What the operator CLI says of its flag. */
  help: string;
  /** Read from stdin when the CLI is given `-`, so it stays out of the shell's history. */
  secret: boolean;
}

export type LivePlatform = CredentialPlatform | ConsentPlatform;

/** A platform whose accounts connect with credentials a person pastes (an app password, a token). */
export interface CredentialPlatform {
  id: string;
  connects: 'credentials';
  credentials: readonly CredentialField[];
  /** The credential naming the server Herald will call, checked by the SSRF guard before connecting. */
  serviceKey: string;
}

/** A platform whose accounts connect through its consent page (OAuth 2.0), with an app the operator registers. */
export interface ConsentPlatform {
  id: string;
  connects: 'oauth';
  /** The platform's name in the variables of its app: HERALD_<NAME>_CLIENT_ID and HERALD_<NAME>_CLIENT_SECRET. */
  configName: string;
  /** `fields` a post must give for a live account of the platform (a Pinterest board), with why. */
  requiredFields?: readonly { key: string; why: string }[];
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
  { id: 'x', connects: 'oauth', configName: 'X' },
  { id: 'linkedin', connects: 'oauth', configName: 'LINKEDIN' },
  { id: 'instagram', connects: 'oauth', configName: 'INSTAGRAM' },
  { id: 'facebook', connects: 'oauth', configName: 'FACEBOOK' },
  { id: 'threads', connects: 'oauth', configName: 'THREADS' },
  { id: 'pinterest', connects: 'oauth', configName: 'PINTEREST', requiredFields: [{ key: 'boardId', why: 'the board to pin to' }] },
  { id: 'youtube', connects: 'oauth', configName: 'YOUTUBE' },
  { id: 'reddit', connects: 'oauth', configName: 'REDDIT' },
  {
    id: 'tiktok',
    connects: 'oauth',
    configName: 'TIKTOK',
    requiredFields: [{ key: 'privacyLevel', why: "who can see the post, one of the creator's options (TikTok allows no default)" }],
  },
] as const satisfies readonly LivePlatform[];

export type LivePlatformId = (typeof LIVE_PLATFORMS)[number]['id'];

export function livePlatform(id: string): LivePlatform | undefined {
  return (LIVE_PLATFORMS as readonly LivePlatform[]).find((platform) => platform.id === id);
}

/** The live platforms whose accounts connect with credentials. */
export function credentialPlatforms(): CredentialPlatform[] {
  return (LIVE_PLATFORMS as readonly LivePlatform[]).filter((platform): platform is CredentialPlatform => platform.connects === 'credentials');
}

/** The variables that configure a consent platform's app on the server. */
export function appVariables(platform: ConsentPlatform): [string, string] {
  return [`HERALD_${platform.configName}_CLIENT_ID`, `HERALD_${platform.configName}_CLIENT_SECRET`];
}

/** Every credential key any live platform takes, each once, in the order of the list. */
export function credentialFields(): CredentialField[] {
  const seen = new Map<string, CredentialField>();
  for (const platform of credentialPlatforms()) for (const field of platform.credentials) if (!seen.has(field.key)) seen.set(field.key, field);
  return [...seen.values()];
}

/** A platform's name as people know it (LinkedIn, not linkedin); the id itself for one Herald does not know. */
export function displayNameOf(platform: string): string {
  return platformRules.find((rules) => rules.id === platform)?.displayName ?? platform;
}

/**
 * Every platform's rules with how its live accounts connect here: `oauth` or `credentials` from
 * the descriptors (`sandbox` for the rest), every way they connect, and whether this server can.
 */
export function platformCatalogue(
  configuredApps: Readonly<Partial<Record<string, unknown>>>,
  /** Platforms whose instances each have a consent page of their own (Mastodon): they connect that way too. */
  instanceConsents: Readonly<Partial<Record<string, unknown>>>,
): Platform[] {
  return platformRules.map((rules) => {
    const connect = livePlatform(rules.id)?.connects ?? 'sandbox';
    const connectWith: Platform['connectWith'] = connect !== 'oauth' && instanceConsents[rules.id] !== undefined ? [connect, 'oauth'] : [connect];
    return { ...rules, connect, connectWith, configured: connect === 'credentials' || (connect === 'oauth' && configuredApps[rules.id] !== undefined) };
  });
}

/**
 * The fields a post lacks for its live targets: for each live account whose platform requires
 * fields (`requiredFields`), every one its override does not give, as `details` items.
 */
export function missingLiveFields(
  accounts: readonly { id: string; platform: string; mode: string }[],
  overrides: readonly { accountId: string; fields?: Readonly<Record<string, unknown>> }[],
): ErrorDetail[] {
  const problems: ErrorDetail[] = [];
  for (const account of accounts) {
    const platform = livePlatform(account.platform);
    if (account.mode !== 'live' || platform?.connects !== 'oauth') continue;
    const index = overrides.findIndex((o) => o.accountId === account.id);
    for (const { key, why } of platform.requiredFields ?? []) {
      if (index !== -1 && overrides[index]?.fields?.[key] !== undefined) continue;
      problems.push({
        code: 'invalid_type',
        expected: 'string',
        received: 'undefined',
        path: index === -1 ? ['accountOverrides'] : ['accountOverrides', index, 'fields', key],
        message: `A live ${displayNameOf(account.platform)} account (${account.id}) needs fields.${key} in its accountOverrides entry: ${why}`,
      });
    }
  }
  return problems;
}
