import type { OperationHandler } from '../contract/handler-types.js';
import { openConsentLink } from '../../domain/connections.js';
import type { OperationContext } from '../kit/context.js';
import { CONSENT_COOKIE_PREFIX, page } from './consent-pages.js';

const USED = page(
  'Link no longer valid',
  'This sign-in link is unknown, has expired or has already been opened. Start connecting the account again from the app that sent you here.',
);

/**
 * A connection's consent link: the first browser to open it gets a cookie bound to the connection
 * (the callback completes only in that browser, RFC 9700 §4.7) and goes on to the platform's
 * consent page. `HEAD` binds nothing: a link checker must not take the link.
 */
export function openConsentLinkHandler(ctx: OperationContext): OperationHandler<'openConsentLink'> {
  return async (req, reply) => {
    reply.header('cache-control', 'no-store');
    if (req.method !== 'GET') return reply.code(200).type('text/html; charset=utf-8').send();
    const opened = await openConsentLink(ctx.deps(), req.params.token, ctx.now());
    if (opened === undefined) return reply.code(400).type('text/html; charset=utf-8').send(USED);
    const maxAge = Math.max(1, Math.ceil((opened.expiresAt.getTime() - ctx.now().getTime()) / 1000));
    // Lax: the platform's redirect back is a top-level GET from its site, which Lax lets through.
    const secure = req.protocol === 'https' ? '; Secure' : '';
    reply.header(
      'set-cookie',
      `${CONSENT_COOKIE_PREFIX}${opened.connectionId}=${opened.browserSecret}; Path=/oauth/callback; Max-Age=${maxAge}; HttpOnly; SameSite=Lax${secure}`,
    );
    return reply.code(302).header('location', opened.consentUrl).send();
  };
}
