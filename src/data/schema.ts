import type { ColumnType } from 'kysely';

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
  created_at: CreatedAt;
}

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
}

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
  status: 'draft' | 'scheduled' | 'published';
  scheduled_at: Date | null;
  created_at: CreatedAt;
  updated_at: ColumnType<Date, Date | undefined, Date>;
}

export interface PostTargetsTable {
  post_id: string;
  account_id: string;
  position: number;
  caption_override: string | null;
  /** jsonb, SQL NULL for none: read as parsed JSON, written as JSON text. */
  fields: ColumnType<Record<string, unknown> | null, string | null, string | null>;
  thread_parts: ColumnType<string[] | null, string | null, string | null>;
}

export interface PostMediaTable {
  post_id: string;
  media_id: string;
  position: number;
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
}
