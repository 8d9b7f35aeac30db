import { SerializerSelector, type SerializerFactory } from '@fastify/fast-json-stringify-compiler';

/**
 * Fastify's own serializers (fast-json-stringify, from each response schema of the spec), each
 * built when it first serializes rather than when its route is built: a route has one per status
 * it may answer, most of them errors that a process rarely sends.
 */
export function serializersOnFirstUse(): SerializerFactory {
  const factory = SerializerSelector();
  return (externalSchemas, options) => {
    const compile = factory(externalSchemas, options);
    return (route) => {
      let serialize: ((doc: unknown) => string) | undefined;
      return (doc: unknown) => (serialize ??= compile(route))(doc);
    };
  };
}
