import type { FastifyReply, FastifyRequest } from 'fastify';
import type { operations } from '../../../generated/openapi.js';

/** Request and response types of each operation, read from the generated spec types. */
type JsonContent<T> = T extends { content: { 'application/json': infer B } } ? B : never;
/** A response body of whatever content type the operation documents (JSON, YAML text, HTML). */
type AnyContent<T> = T extends { content: infer C } ? C[keyof C] : never;

/** The API's operations; the spec's `webhooks` (what Herald sends, named `…Event`) are not served. */
export type OperationId = Exclude<keyof operations, `${string}Event`>;
export type RequestBodyOf<K extends OperationId> = operations[K] extends { requestBody: infer R } ? JsonContent<R> : undefined;
export type QueryOf<K extends OperationId> = NonNullable<operations[K]['parameters']['query']>;
export type PathParamsOf<K extends OperationId> = NonNullable<operations[K]['parameters']['path']>;
type ResponsesOf<K extends OperationId> = operations[K]['responses'];
export type SuccessBodyOf<K extends OperationId> = AnyContent<ResponsesOf<K>[Extract<keyof ResponsesOf<K>, 200 | 201 | 202 | 302>]>;

export type OperationRequest<K extends OperationId> = FastifyRequest<{
  Body: RequestBodyOf<K>;
  Querystring: QueryOf<K>;
  Params: PathParamsOf<K>;
}>;

export type OperationHandler<K extends OperationId> = (req: OperationRequest<K>, reply: FastifyReply) => Promise<SuccessBodyOf<K>>;

/** One handler per operationId: a missing one is a compile error rather than glue's 500 "not implemented". */
export type ServiceHandlers = { [K in OperationId]: OperationHandler<K> };

/** Values the validator fills from the spec's `default`, so a handler never restates them. */
export function defaulted<T>(value: T | undefined, name: string): T {
  if (value === undefined) throw new Error(`${name} should have been defaulted by the request validator`);
  return value;
}
