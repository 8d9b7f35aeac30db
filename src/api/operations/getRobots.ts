import type { OperationHandler } from '../contract/handler-types.js';

/** Public media URLs are for crawlers (Meta's fetches them, honouring robots.txt); the API is not. */
export const ROBOTS_TXT = 'User-agent: *\nAllow: /media/\nDisallow: /\n';

export function getRobotsHandler(): OperationHandler<'getRobots'> {
  return async (_req, reply) => {
    reply.type('text/plain; charset=utf-8');
    return ROBOTS_TXT;
  };
}
