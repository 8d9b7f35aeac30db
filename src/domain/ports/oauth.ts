import type { ConnectedAccount } from './publisher.js';

/** An app registered with an authorization server. */
export interface RegisteredApp {
  clientId: string;
  clientSecret: string;
}

/**
 * A platform whose every server authorizes on its own (Mastodon): Herald registers itself as an
 * app on an instance, then takes people through that instance's consent page. Both reject with a
 * ConnectError whose message is fit to show a person.
 */
export interface InstanceConsent {
  register(instance: string, redirectUri: string): Promise<RegisteredApp>;
  consent(instance: string, app: RegisteredApp): OAuthConsent;
}

/** The consent page to send a person to, and the PKCE verifier to keep for the exchange (null where the platform takes none). */
export interface ConsentStart {
  authorizationUrl: string;
  codeVerifier: string | null;
}

/**
 * A platform's OAuth 2.0 authorization-code flow, for one app configured on this server. Both
 * steps reject with a ConnectError whose message is fit to show a person (no token, no secret).
 */
export interface OAuthConsent {
  begin(state: string, redirectUri: string): Promise<ConsentStart>;
  /**
   * Exchanges the code for tokens and reads who the account is: the accounts and the credentials to
   * keep, at least one (a Facebook consent grants every Page the person chose, each its own account).
   */
  finish(code: string, codeVerifier: string | null, redirectUri: string): Promise<[ConnectedAccount<unknown>, ...ConnectedAccount<unknown>[]]>;
  /** Revokes stored credentials at the platform, where it offers revocation; never throws. */
  revoke(credentials: unknown): Promise<void>;
}
