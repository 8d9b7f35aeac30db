import type { OperationContext } from './context.js';
import { createPostHandler } from './createPost.js';
import { deletePostHandler } from './deletePost.js';
import type { ServiceHandlers } from './handler-types.js';
import { listAccountsHandler } from './listAccounts.js';
import { listPostsHandler } from './listPosts.js';

/** The glue's serviceHandlers: every operationId of the spec mapped to its handler. */
export function createServiceHandlers(ctx: OperationContext): ServiceHandlers {
  return {
    createPost: createPostHandler(ctx),
    listPosts: listPostsHandler(ctx),
    deletePost: deletePostHandler(ctx),
    listAccounts: listAccountsHandler(ctx),
  };
}
