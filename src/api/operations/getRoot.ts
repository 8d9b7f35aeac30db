import type { OperationHandler } from '../contract/handler-types.js';

/** The root is no resource: a newcomer who opens the server's address is sent to the reference. */
export function getRootHandler(): OperationHandler<'getRoot'> {
  return async (_req, reply) => {
    reply.code(302).header('location', '/docs').type('text/plain; charset=utf-8');
    return "Herald's API reference is at /docs\n";
  };
}
