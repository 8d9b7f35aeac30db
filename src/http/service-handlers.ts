import type { ServiceHandlers } from '../contract/handler-types.js';
import { connectAccountHandler } from '../operations/connectAccount.js';
import { createPostHandler } from '../operations/createPost.js';
import { deleteMediaHandler } from '../operations/deleteMedia.js';
import { deletePostHandler } from '../operations/deletePost.js';
import { disconnectAccountHandler } from '../operations/disconnectAccount.js';
import { getApiReferenceHandler } from '../operations/getApiReference.js';
import { getOpenApiJsonHandler } from '../operations/getOpenApiJson.js';
import { getOpenApiYamlHandler } from '../operations/getOpenApiYaml.js';
import { getPostHandler } from '../operations/getPost.js';
import { listAccountsHandler } from '../operations/listAccounts.js';
import { listMediaHandler } from '../operations/listMedia.js';
import { listPlatformsHandler } from '../operations/listPlatforms.js';
import { listPostsHandler } from '../operations/listPosts.js';
import { publishPostHandler } from '../operations/publishPost.js';
import { retryPostHandler } from '../operations/retryPost.js';
import { updatePostHandler } from '../operations/updatePost.js';
import { validatePostHandler } from '../operations/validatePost.js';
import { uploadMediaHandler } from '../operations/uploadMedia.js';
import type { OperationContext, ReferenceContent } from '../operations-kit/context.js';

/** The glue's serviceHandlers: every operationId of the spec mapped to its handler. */
export function createServiceHandlers(ctx: OperationContext, reference: ReferenceContent): ServiceHandlers {
  return {
    createPost: createPostHandler(ctx),
    listPosts: listPostsHandler(ctx),
    deletePost: deletePostHandler(ctx),
    validatePost: validatePostHandler(ctx),
    getPost: getPostHandler(ctx),
    updatePost: updatePostHandler(ctx),
    publishPost: publishPostHandler(ctx),
    retryPost: retryPostHandler(ctx),
    listAccounts: listAccountsHandler(ctx),
    connectAccount: connectAccountHandler(ctx),
    disconnectAccount: disconnectAccountHandler(ctx),
    uploadMedia: uploadMediaHandler(ctx),
    listMedia: listMediaHandler(ctx),
    deleteMedia: deleteMediaHandler(ctx),
    listPlatforms: listPlatformsHandler(),
    getOpenApiJson: getOpenApiJsonHandler(reference),
    getOpenApiYaml: getOpenApiYamlHandler(reference),
    getApiReference: getApiReferenceHandler(reference),
  };
}
