import type { OperationHandler } from '../contract/handler-types.js';
import { completeConnection } from '../../domain/connections.js';
import type { OperationContext } from '../kit/context.js';

/** Herald's own words only: nothing from the request reaches the page. */
const page = (title: string, text: string) =>
  `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>${title}</title></head><body><h1>${title}</h1><p>${text}</p></body></html>`;
const CONNECTED = page('Account connected', 'The account is connected to Herald. You can close this window.');
const NOT_CONNECTED = page('Account not connected', 'The account was not connected. You can close this window; the app that sent you here can say why.');
const UNKNOWN = page(
  'Link no longer valid',
  'This sign-in link is unknown or has already been used. Start connecting the account again from the app that sent you here.',
);

export function oauthCallbackHandler(ctx: OperationContext): OperationHandler<'oauthCallback'> {
  return async (req, reply) => {
    const outcome = await completeConnection(ctx.deps(), req.query, ctx.now());
    // The URL carried a one-time code: nothing keeps it, and no page it leads to learns it.
    reply.header('cache-control', 'no-store');
    if (outcome.kind === 'unknown_state') return reply.code(400).type('text/html; charset=utf-8').send(UNKNOWN);
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
