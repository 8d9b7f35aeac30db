import type { components } from '../../generated/openapi.js';

/** Shapes of the public API, taken from the generated types so they cannot drift from the spec. */
type Schemas = components['schemas'];

export type Post = Schemas['Post'];
export type PostType = Schemas['PostType'];
export type PostCreateInput = Schemas['PostCreateInput'];
export type PostCreateResult = Schemas['PostCreateResult'];
export type PostList = Schemas['PostList'];
export type PostDetail = Schemas['PostDetail'];
export type PostValidation = Schemas['PostValidation'];
export type PostTarget = Schemas['PostTarget'];
export type PostStatus = Schemas['PostStatus'];
export type PostUpdateInput = Schemas['PostUpdateInput'];
export type AccountConnectInput = Schemas['AccountConnectInput'];
export type Account = Schemas['Account'];
export type AccountList = Schemas['AccountList'];
export type Connection = Schemas['Connection'];
export type ConnectionStartInput = Schemas['ConnectionStartInput'];
export type Platform = Schemas['Platform'];
export type ErrorDetail = Schemas['ErrorDetail'];
export type Media = Schemas['Media'];
export type MediaList = Schemas['MediaList'];
export type Webhook = Schemas['Webhook'];
export type WebhookWithSecret = Schemas['WebhookWithSecret'];
export type WebhookCreateInput = Schemas['WebhookCreateInput'];
export type WebhookUpdateInput = Schemas['WebhookUpdateInput'];
export type WebhookList = Schemas['WebhookList'];
export type WebhookDelivery = Schemas['WebhookDelivery'];
export type WebhookDeliveryList = Schemas['WebhookDeliveryList'];
export type PingEvent = Schemas['PingEvent'];
export type Readiness = Schemas['Readiness'];
