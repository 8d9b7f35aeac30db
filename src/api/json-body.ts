import type { FastifyInstance } from 'fastify';

/**
 * JSON is the only body parsed for operations (uploads add multipart). An empty JSON body counts
 * as no body, so the schema reports it as a missing object rather than Fastify refusing it with
 * its own error. Bodies of other types get a 415.
 */
export function acceptJsonBodiesOnly(app: FastifyInstance): void {
  const parseJson = app.getDefaultJsonParser('error', 'error');
  app.removeAllContentTypeParsers();
  app.addContentTypeParser('application/json', { parseAs: 'string' }, (req, body, done) => {
    const text = body.toString();
    if (text === '') {
      done(null, undefined);
      return;
    }
    // The default parser answers through `done`; its type also admits the promise form, unused here.
    void parseJson(req, text, done);
  });
}
