import { defaulted, type OperationHandler } from '../contract/handler-types.js';
import { completeIdempotencyKey } from '../../domain/idempotency.js';
import { createPost } from '../../domain/posts/create-post.js';
import { callerOf } from '../kit/caller.js';
import type { OperationContext } from '../kit/context.js';
import { heldIdempotencyKey } from '../kit/idempotency.js';

const CREATED = 201;

export function createPostHandler(ctx: OperationContext): OperationHandler<'createPost'> {
  return async (req, reply) => {
    const input = { ...req.body, postType: defaulted(req.body.postType, 'postType') };
    const held = heldIdempotencyKey(req);
    // The answer is kept with the post, in its transaction: a retry after a commit whose
    // acknowledgement was lost (the database gone mid-COMMIT) replays it rather than creating another.
    const result = await createPost(
      ctx.db(),
      callerOf(req).userId,
      input,
      ctx.now(),
      held && ((trx, created) => completeIdempotencyKey(trx, held.scope, held.claim, CREATED, JSON.stringify(created))),
    );
    reply.code(CREATED);
    return result;
  };
}
