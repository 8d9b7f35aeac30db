import { randomBytes } from 'node:crypto';
import type { CredentialVault } from '../ports/secrets.js';

/** A Standard Webhooks secret: `whsec_` and the base64 of 24 random bytes (the spec asks for 24 to 64). */
export function newWebhookSecret(): string {
  return `whsec_${randomBytes(24).toString('base64')}`;
}

/** Secrets are sealed like account credentials: Herald must read them back to sign, so they cannot be hashed. */
export function sealWebhookSecret(vault: CredentialVault, secret: string): string {
  return vault.seal({ secret });
}

export function openWebhookSecret(vault: CredentialVault, sealed: string): string {
  return vault.open<{ secret: string }>(sealed).secret;
}
