import type { OperationContext } from './context.js';
import { createPostHandler } from './createPost.js';
import { deleteMediaHandler } from './deleteMedia.js';
import { deletePostHandler } from './deletePost.js';
import type { ServiceHandlers } from './handler-types.js';
import { listAccountsHandler } from './listAccounts.js';
import { listMediaHandler } from './listMedia.js';
import { listPlatformsHandler } from './listPlatforms.js';
import { listPostsHandler } from './listPosts.js';
import { getApiReferenceHandler, getOpenApiJsonHandler, getOpenApiYamlHandler, type ReferenceContent } from './reference.js';
import { uploadMediaHandler } from './uploadMedia.js';

/** The glue's serviceHandlers: every operationId of the spec mapped to its handler. */
export function createServiceHandlers(ctx: OperationContext, reference: ReferenceContent): ServiceHandlers {
  return {
    createPost: createPostHandler(ctx),
    listPosts: listPostsHandler(ctx),
    deletePost: deletePostHandler(ctx),
    listAccounts: listAccountsHandler(ctx),
    uploadMedia: uploadMediaHandler(ctx),
    listMedia: listMediaHandler(ctx),
    deleteMedia: deleteMediaHandler(ctx),
    listPlatforms: listPlatformsHandler(),
    getOpenApiJson: getOpenApiJsonHandler(reference),
    getOpenApiYaml: getOpenApiYamlHandler(reference),
    getApiReference: getApiReferenceHandler(reference),
  };
}
