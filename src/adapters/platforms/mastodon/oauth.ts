import { ConnectError, type CredentialPublisher } from '../../../domain/ports/publisher.js';
import type { InstanceConsent } from '../../../domain/ports/oauth.js';
import { createOAuthClient } from '../oauth.js';
import type { MastodonCredentials } from './publisher.js';
import { createRest, hostOf } from './rest.js';

/**
 * What Herald asks of an instance (docs.joinmastodon.org/api/oauth-scopes): who the account is,
 * its statuses (to look for one in doubt), and posting statuses and media.
 */
export const MASTODON_SCOPES = ['read:accounts', 'read:statuses', 'write:statuses', 'write:media'] as const;

/**
 * Mastodon's consent flow (docs.joinmastodon.org/methods/apps/#create, /methods/oauth/): Herald
 * registers itself as an app on the instance (POST /api/v1/apps), then the authorization-code
 * flow on that instance, with PKCE S256 (Mastodon 4.3 and later check it; earlier ones ignore it)
 * and the client secret in the body. The account is read as a pasted token would be, and kept
 * in the same form: the instance and its access token. Every call goes through the given fetch
 * (the SSRF guard's).
 */
export function mastodonInstanceConsent(fetch: typeof globalThis.fetch, publisher: CredentialPublisher<MastodonCredentials>): InstanceConsent {
  return {
    async register(instance, redirectUri) {
      const registered = await createRest(
        fetch,
        instance,
        '',
      )<{ client_id?: unknown; client_secret?: unknown }>({
        method: 'POST',
        path: '/api/v1/apps',
        json: { client_name: 'Herald', redirect_uris: redirectUri, scopes: MASTODON_SCOPES.join(' ') },
        timeoutMs: 30_000,
      });
      if (!registered.ok) {
        const failure = registered.failure;
        if (failure.kind === 'not_allowed') throw new ConnectError('url_not_allowed', failure.message);
        const why = failure.kind === 'http' ? `it answered ${failure.status}${failure.error === null ? '' : ` (${failure.error})`}` : failure.message;
        throw new ConnectError('unreachable', `${hostOf(instance)} did not register Herald as an app: ${why}`);
      }
      const { client_id: clientId, client_secret: clientSecret } = registered.data;
      if (typeof clientId !== 'string' || typeof clientSecret !== 'string')
        throw new ConnectError('bad_answer', `${hostOf(instance)} answered an app registration Herald cannot read`);
      return { clientId, clientSecret };
    },
    consent(instance, app) {
      return createOAuthClient(
        {
          displayName: hostOf(instance),
          endpoints: { authorize: `${instance}/oauth/authorize`, token: `${instance}/oauth/token`, revoke: `${instance}/oauth/revoke` },
          scopes: MASTODON_SCOPES,
          pkce: true,
          clientAuth: 'post',
          identify: (tokens) => publisher.connect({ instance, accessToken: tokens.accessToken }),
        },
        app,
        { fetch, baseUrl: undefined },
      ).consent;
    },
  };
}
