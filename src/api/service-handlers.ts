import type { ServiceHandlers } from './contract/handler-types.js';
import { connectAccountHandler } from './operations/connectAccount.js';
import { createPostHandler } from './operations/createPost.js';
import { createWebhookHandler } from './operations/createWebhook.js';
import { deleteMediaHandler } from './operations/deleteMedia.js';
import { deletePostHandler } from './operations/deletePost.js';
import { deleteWebhookHandler } from './operations/deleteWebhook.js';
import { disconnectAccountHandler } from './operations/disconnectAccount.js';
import { getApiReferenceHandler } from './operations/getApiReference.js';
import { getConnectionHandler } from './operations/getConnection.js';
import { getLivenessHandler } from './operations/getLiveness.js';
import { getRobotsHandler } from './operations/getRobots.js';
import { getRootHandler } from './operations/getRoot.js';
import { getOpenApiJsonHandler } from './operations/getOpenApiJson.js';
import { getOpenApiYamlHandler } from './operations/getOpenApiYaml.js';
import { getPostHandler } from './operations/getPost.js';
import { getPublicMediaHandler } from './operations/getPublicMedia.js';
import { getReadinessHandler } from './operations/getReadiness.js';
import { getWebhookHandler } from './operations/getWebhook.js';
import { listAccountsHandler } from './operations/listAccounts.js';
import { listMediaHandler } from './operations/listMedia.js';
import { listPlatformsHandler } from './operations/listPlatforms.js';
import { listPostsHandler } from './operations/listPosts.js';
import { listWebhookDeliveriesHandler } from './operations/listWebhookDeliveries.js';
import { listWebhooksHandler } from './operations/listWebhooks.js';
import { oauthCallbackHandler } from './operations/oauthCallback.js';
import { openConsentLinkHandler } from './operations/openConsentLink.js';
import { publishPostHandler } from './operations/publishPost.js';
import { retryPostHandler } from './operations/retryPost.js';
import { rotateWebhookSecretHandler } from './operations/rotateWebhookSecret.js';
import { startConnectionHandler } from './operations/startConnection.js';
import { testWebhookHandler } from './operations/testWebhook.js';
import { updatePostHandler } from './operations/updatePost.js';
import { updateWebhookHandler } from './operations/updateWebhook.js';
import { validatePostHandler } from './operations/validatePost.js';
import { uploadMediaHandler } from './operations/uploadMedia.js';
import type { OperationContext, ReferenceContent } from './kit/context.js';

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
    startConnection: startConnectionHandler(ctx),
    getConnection: getConnectionHandler(ctx),
    oauthCallback: oauthCallbackHandler(ctx),
    openConsentLink: openConsentLinkHandler(ctx),
    uploadMedia: uploadMediaHandler(ctx),
    listMedia: listMediaHandler(ctx),
    deleteMedia: deleteMediaHandler(ctx),
    getPublicMedia: getPublicMediaHandler(ctx),
    listWebhooks: listWebhooksHandler(ctx),
    createWebhook: createWebhookHandler(ctx),
    getWebhook: getWebhookHandler(ctx),
    updateWebhook: updateWebhookHandler(ctx),
    deleteWebhook: deleteWebhookHandler(ctx),
    rotateWebhookSecret: rotateWebhookSecretHandler(ctx),
    testWebhook: testWebhookHandler(ctx),
    listWebhookDeliveries: listWebhookDeliveriesHandler(ctx),
    listPlatforms: listPlatformsHandler(ctx),
    getOpenApiJson: getOpenApiJsonHandler(reference),
    getOpenApiYaml: getOpenApiYamlHandler(reference),
    getRobots: getRobotsHandler(),
    getRoot: getRootHandler(),
    getApiReference: getApiReferenceHandler(reference),
    getLiveness: getLivenessHandler(),
    getReadiness: getReadinessHandler(ctx),
  };
}
