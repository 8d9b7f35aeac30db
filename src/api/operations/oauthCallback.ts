import type { OperationHandler } from '../contract/handler-types.js';
import { completeConnection } from '../../domain/connections.js';
import type { OperationContext } from '../kit/context.js';
import { consentCookiesOf, page } from './consent-pages.js';

const CONNECTED = page('Account connected', 'The account is connected to Herald. You can close this window.');
const NOT_CONNECTED = page('Account not connected', 'The account was not connected. You can close this window; the app that sent you here can say why.');
const UNKNOWN = page(
  'Link no longer valid',
  'This sign-in link is unknown or has already been used. Start connecting the account again from the app that sent you here.',
);
const OTHER_BROWSER = page(
  'Not connected: wrong browser',
  'This sign-in was not started in this browser, so no account was connected. Only the browser that opened the sign-in link from the app can finish it.',
);

export function oauthCallbackHandler(ctx: OperationContext): OperationHandler<'oauthCallback'> {
  return async (req, reply) => {
    // The URL carried a one-time code: nothing keeps it, and no page it leads to learns it.
    reply.header('cache-control', 'no-store');
    // Only a GET completes: a HEAD (a link preview, a checker) must not spend the one-time state.
    if (req.method !== 'GET') return reply.code(200).type('text/html; charset=utf-8').send();
    const outcome = await completeConnection(ctx.deps(), req.query, consentCookiesOf(req.headers.cookie), ctx.now());
    if (outcome.kind === 'unknown_state') return reply.code(400).type('text/html; charset=utf-8').send(UNKNOWN);
    if (outcome.kind === 'other_browser') return reply.code(403).type('text/html; charset=utf-8').send(OTHER_BROWSER);
    const status = outcome.connection.status === 'connected' ? 'connected' : 'failed';
    if (outcome.returnUrl !== null) {
      const target = new URL(outcome.returnUrl);
      target.searchParams.set('connection', outcome.connection.id);
      target.searchParams.set('status', status);
      return reply.code(302).header('location', target.toString()).send();
    }
    return reply.type('text/html; charset=utf-8').send(status === 'connected' ? CONNECTED : NOT_CONNECTED);
  };
}
