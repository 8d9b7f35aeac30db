import type { ColumnType } from 'kysely';
import type { components } from '../../generated/openapi.js';

/** Row types of the database, one interface per table (Kysely's convention). */

type CreatedAt = ColumnType<Date, Date | undefined, never>;

export interface UsersTable {
  id: string;
  name: string | null;
  created_at: CreatedAt;
}

export interface OrganizationsTable {
  id: string;
  name: string;
  created_at: CreatedAt;
}

export interface MembershipsTable {
  org_id: string;
  user_id: string;
  role: ColumnType<MembershipRole, MembershipRole | undefined, MembershipRole>;
  created_at: CreatedAt;
}

export type MembershipRole = 'owner' | 'member';

export interface ApiKeysTable {
  id: string;
  user_id: string;
  /** SHA-256 of the whole key, hex; the plaintext is never stored. */
  key_hash: string;
  expires_at: Date | null;
  revoked_at: Date | null;
  created_at: CreatedAt;
}

export interface AccountsTable {
  id: string;
  platform: string;
  username: string;
  display_name: string | null;
  owner_user_id: string | null;
  owner_org_id: string | null;
  disconnected_at: Date | null;
  created_at: CreatedAt;
  mode: ColumnType<AccountMode, AccountMode | undefined, AccountMode>;
  platform_user_id: string | null;
  /** Sealed (encrypted) credentials; null for sandbox and disconnected accounts. */
  credentials: string | null;
  credentials_version: ColumnType<number, number | undefined, number>;
  health: ColumnType<AccountHealth, AccountHealth | undefined, AccountHealth>;
  health_message: string | null;
  /** When the stored credentials end for good (they cannot be refreshed); null when they can, or never end. */
  credentials_end_at: ColumnType<Date | null, Date | null | undefined, Date | null>;
  next_publish_at: Date | null;
  /** The last turn handed to a post this live account's pace holds back (the end of its line); null before any. */
  last_turn_at: ColumnType<Date | null, Date | null | undefined, Date | null>;
  /** Who holds the refresh of the credentials now (token-source.ts), and until when; null when nobody does. */
  refresh_lease_id: ColumnType<string | null, string | null | undefined, string | null>;
  refresh_lease_until: ColumnType<Date | null, Date | null | undefined, Date | null>;
}

export type AccountMode = 'sandbox' | 'live';
export type AccountHealth = 'ok' | 'expiring' | 'needs_reconnect';

export interface MediaAssetsTable {
  id: string;
  owner_user_id: string;
  kind: 'image' | 'video';
  mime: string;
  /** bigint: pg returns int8 as a string, so reads are converted where they are mapped. */
  bytes: ColumnType<string, number, number>;
  width: number | null;
  height: number | null;
  duration_ms: number | null;
  /** Where the file is in media storage; null for records made from metadata alone (herald media add). */
  storage_key: string | null;
  alt_text: string | null;
  created_at: CreatedAt;
}

export interface PostsTable {
  id: string;
  user_id: string;
  caption: string | null;
  first_comment: string | null;
  post_type: string;
  status: PostStatus;
  scheduled_at: Date | null;
  created_at: CreatedAt;
  updated_at: ColumnType<Date, Date | undefined, Date>;
  /** When a worker should next look at the post (its schedule, a retry, a lease's end); null when nothing is due ever. */
  next_check_at: Date | null;
}

export type PostStatus = 'draft' | 'scheduled' | 'publishing' | 'published' | 'partial' | 'failed';
export type TargetState = 'pending' | 'publishing' | 'published' | 'failed' | 'unknown';

export interface PostTargetsTable {
  post_id: string;
  account_id: string;
  position: number;
  caption_override: string | null;
  /** jsonb, SQL NULL for none: read as parsed JSON, written as JSON text. */
  fields: ColumnType<Record<string, unknown> | null, string | null, string | null>;
  thread_parts: ColumnType<string[] | null, string | null, string | null>;
  state: ColumnType<TargetState, TargetState | undefined, TargetState>;
  attempts: ColumnType<number, number | undefined, number>;
  attempts_before_retry: ColumnType<number, number | undefined, number>;
  first_attempt_at: Date | null;
  lease_until: Date | null;
  in_doubt: ColumnType<boolean, boolean | undefined, boolean>;
  /** Publishing, waiting on the platform (a pending outcome): the look at lease_until resumes this attempt. */
  awaiting_platform: ColumnType<boolean, boolean | undefined, boolean>;
  next_attempt_at: Date | null;
  error_category: string | null;
  error_message: string | null;
  platform_post_id: string | null;
  url: string | null;
  published_at: Date | null;
}

export interface TargetPartsTable {
  post_id: string;
  account_id: string;
  position: number;
  material_key: string;
  /** ISO 8601 text, byte for byte what the first attempt sent. */
  material_created_at: string;
  platform_post_id: string | null;
  url: string | null;
  cid: string | null;
  published_at: Date | null;
  /** The publisher's own record of work the platform is still doing for this part; null when none. */
  progress: ColumnType<string | null, string | null | undefined, string | null>;
}

export interface SandboxOutboxTable {
  platform_post_id: string;
  account_id: string;
  position: number;
  platform: string;
  username: string;
  text: string;
  media_ids: ColumnType<string[], string, string>;
  reply_to: string | null;
  created_at: CreatedAt;
}

export interface PostMediaTable {
  post_id: string;
  media_id: string;
  position: number;
}

export type WebhookEventType = components['schemas']['WebhookEventType'];

export interface WebhookEndpointsTable {
  id: string;
  user_id: string;
  url: string;
  event_types: ColumnType<WebhookEventType[], string, string>;
  description: string | null;
  /** Sealed by the credential vault. */
  secret: string;
  previous_secret: string | null;
  previous_secret_expires_at: Date | null;
  enabled: ColumnType<boolean, boolean | undefined, boolean>;
  disabled_reason: string | null;
  disabled_at: Date | null;
  consecutive_failures: ColumnType<number, number | undefined, number>;
  failing_since: Date | null;
  created_at: CreatedAt;
  updated_at: ColumnType<Date, Date | undefined, Date>;
}

export interface WebhookEventsTable {
  id: string;
  user_id: string;
  type: WebhookEventType;
  /** The JSON body exactly as sent. */
  body: string;
  created_at: CreatedAt;
}

export type DeliveryState = 'pending' | 'delivering' | 'succeeded' | 'failed';

export interface WebhookDeliveriesTable {
  id: string;
  event_id: string;
  endpoint_id: string;
  state: ColumnType<DeliveryState, DeliveryState | undefined, DeliveryState>;
  attempts: ColumnType<number, number | undefined, number>;
  first_attempt_at: Date | null;
  due_at: Date | null;
  created_at: CreatedAt;
}

export interface WebhookAttemptsTable {
  delivery_id: string;
  attempt: number;
  endpoint_id: string;
  event_id: string;
  event_type: WebhookEventType;
  attempted_at: Date;
  succeeded: boolean;
  status_code: number | null;
  latency_ms: number | null;
  error: string | null;
  response_excerpt: string | null;
  next_attempt_at: Date | null;
}

export type ConnectionStatus = 'pending' | 'connected' | 'failed' | 'expired';

export interface ConnectionsTable {
  id: string;
  user_id: string;
  platform: string;
  status: ConnectionStatus;
  /** SHA-256 (hex) of the state sent to the platform; null once the connection has ended. */
  state_hash: string | null;
  /** The PKCE verifier, sealed; null without PKCE or once ended. */
  code_verifier: string | null;
  /** Sealed `{ consentUrl, startToken }`: the platform's consent URL (it holds the raw state) and Herald's link to it; null once ended. */
  consent_link: string | null;
  /** SHA-256 (hex) of the token in Herald's consent link (`/oauth/start/{token}`); null once ended. */
  start_hash: ColumnType<string | null, string | null | undefined, string | null>;
  /** SHA-256 (hex) of the cookie set in the browser that first opened the consent link; null until opened. */
  browser_hash: ColumnType<string | null, string | null | undefined, string | null>;
  return_url: string | null;
  /** The instance the consent goes through, for platforms whose servers authorize on their own (Mastodon). */
  instance: ColumnType<string | null, string | null | undefined, string | null>;
  /** The first connected account (the one `account_ids` starts with). */
  account_id: string | null;
  /** Every account the consent connected, in the platform's order; null until connected. */
  account_ids: ColumnType<string[] | null, string[] | null | undefined, string[] | null>;
  error: string | null;
  /** What a program matches on for a failed connection (`client_refused`, …). */
  error_code: ColumnType<string | null, string | null | undefined, string | null>;
  created_at: Date;
  expires_at: Date;
  ended_at: Date | null;
}

export interface InstanceAppsTable {
  platform: string;
  /** The instance's origin. */
  instance: string;
  redirect_uri: string;
  client_id: string;
  /** Sealed. */
  client_secret: string;
  created_at: ColumnType<Date, Date | undefined, never>;
  /** When a connection through the app first connected an account (the app issued a token); null: never. */
  used_at: ColumnType<Date | null, Date | null | undefined, Date | null>;
}

export interface IdempotencyKeysTable {
  user_id: string;
  operation_id: string;
  key: string;
  fingerprint: string;
  claim: string;
  state: 'in_progress' | 'done';
  status_code: number | null;
  body: string | null;
  /** `body` is sealed with the service's secret key (the answer carries a secret). */
  sealed: ColumnType<boolean, boolean | undefined, boolean>;
  locked_until: Date;
  expires_at: Date;
}

export interface Database {
  users: UsersTable;
  organizations: OrganizationsTable;
  memberships: MembershipsTable;
  api_keys: ApiKeysTable;
  accounts: AccountsTable;
  media_assets: MediaAssetsTable;
  posts: PostsTable;
  post_targets: PostTargetsTable;
  post_media: PostMediaTable;
  target_parts: TargetPartsTable;
  sandbox_outbox: SandboxOutboxTable;
  webhook_endpoints: WebhookEndpointsTable;
  webhook_events: WebhookEventsTable;
  webhook_deliveries: WebhookDeliveriesTable;
  webhook_attempts: WebhookAttemptsTable;
  idempotency_keys: IdempotencyKeysTable;
  connections: ConnectionsTable;
  instance_apps: InstanceAppsTable;
}
