import type { Readable } from 'node:stream';
import type { Kysely } from 'kysely';
import type { Database } from '../../db/schema.js';

/**
 * What a platform client does for the publishing road. The domain decides when and what to
 * publish and records every outcome; a publisher only talks to its platform. Each publisher is
 * constructed with the fetch it must use (the SSRF guard's) and knows nothing of the database,
 * except the sandbox, whose "platform" is Herald's own outbox table.
 */
export interface Publisher<C = unknown> {
  /**
   * Verifies credentials with the platform (one call) and says who the account is; for the
   * platforms that connect with credentials (those that connect through a consent page have none).
   */
  connect?(input: ConnectInput): Promise<ConnectedAccount<C>>;
  /**
   * When refreshed credentials end unless refreshed again (Instagram's and Threads' 60-day tokens):
   * the account's end moves with each refresh, so it shows `expiring` only when refreshing stopped.
   */
  credentialsEndAt?(credentials: C): Date | null;
  /**
   * Refreshes credentials that end unless refreshed, for an account that has not published
   * lately (housekeeping asks in their last 30 days); the stored ones as they are when it is too
   * early. Rejects (a ConnectError for a refusal) when the platform does not renew them.
   */
  renewCredentials?(credentials: C, now: Date): Promise<C>;
  /**
   * The host an account's calls go to, from its platform user id, where the platform has many (a
   * Mastodon instance): a worker caps its calls in flight per host. None: the platform's one.
   */
  hostOf?(platformUserId: string | null): string | null;
  /** Chosen once per part before its first call, stored, and reused on every retry. */
  newPartMaterial(now: Date): PartMaterial;
  /**
   * Asks the platform whether the first part not yet recorded, which an earlier attempt may have
   * sent, exists, before anything is sent again: found (with its id), absent, or cannot tell (the
   * target then ends `unknown`, for a person to decide). Called only when a target is in doubt.
   * A publisher whose every call repeats without a second post needs none (Bluesky writes at a
   * record key chosen before the first call).
   */
  reconcile?(request: PublishRequest<C>, part: PartToPublish, hooks: PublishHooks<C>): Promise<Reconciliation>;
  /**
   * Publishes the parts not yet published, in order (part N+1 replies to part N, the first
   * part is the thread's root). Never throws: every failure is an outcome.
   */
  publish(request: PublishRequest<C>, hooks: PublishHooks<C>): Promise<PublishOutcome>;
  /**
   * For a platform inside Herald's own database (the sandbox's outbox): publishes these requests,
   * as `publish` would, in the transaction that records their outcomes, so that each call commits
   * with its outcome or not at all, and none is ever in doubt. One outcome per request, in order.
   * Rejects when it cannot write: nothing of the transaction commits, and the targets are taken
   * again when their lease ends.
   */
  publishWithOutcomes?(trx: Kysely<Database>, requests: readonly PublishRequest<C>[]): Promise<PublishOutcome[]>;
}

/** The publisher of a platform whose accounts connect with credentials a person pastes (Bluesky, Mastodon). */
export type CredentialPublisher<C = unknown> = Publisher<C> & Required<Pick<Publisher<C>, 'connect'>>;

/** The credentials a client sent to connectAccount, already checked against the spec's schema. */
export type ConnectInput = Record<string, string>;

export interface ConnectedAccount<C> {
  /** The platform's own id for the account (a Bluesky DID, a Mastodon account id). */
  platformUserId: string;
  username: string;
  displayName: string | null;
  /** What is stored (encrypted) to publish later: never the app password, only tokens. */
  credentials: C;
  /** When the credentials end for good, where they cannot be refreshed (a LinkedIn self-serve token): a new consent is needed then. */
  endsAt?: Date;
  /**
   * The id earlier versions of Herald stored for this account, where it was not unique on the
   * platform (a Mastodon account id without its instance): an account stored under it is the same
   * one only when its stored service URL is this one's.
   */
  formerPlatformUserId?: string;
}

/**
 * Why a connect failed: the platform refused the credentials (400), the SSRF guard refused the
 * address a name resolved to (400), the platform could not be reached (502), or it answered
 * something Herald cannot use: too large, or a profile of the wrong shape (502); or the platform
 * refused Herald's own client id or secret at its token endpoint (the operator must fix them).
 */
export class ConnectError extends Error {
  constructor(
    readonly reason: 'invalid_credentials' | 'url_not_allowed' | 'unreachable' | 'bad_answer' | 'client_refused',
    message: string,
  ) {
    super(message);
    this.name = 'ConnectError';
  }
}

export interface PartMaterial {
  /** Bluesky: the record key (a TID). Mastodon: the Idempotency-Key. Sandbox: the outbox key. */
  key: string;
  /** ISO 8601; Bluesky's record createdAt, so a retried record is byte-identical. */
  createdAt: string;
}

export interface PublishedPart {
  /** The platform's id for the post (a Bluesky at:// URI, a Mastodon status id). */
  platformPostId: string;
  /** Where a person sees it; null when the platform has no web page for it. */
  url: string | null;
  /** Bluesky's record CID (replies need a strong ref); null elsewhere. */
  cid: string | null;
}

export interface MediaToPublish {
  id: string;
  kind: 'image' | 'video';
  mime: string;
  bytes: number;
  width: number | null;
  height: number | null;
  durationMs: number | null;
  altText: string | null;
  /** The file's bytes from media storage, or bytes `start` to `end` (inclusive) of it: streamed, never whole in memory. */
  open(range?: { start: number; end: number }): Promise<Readable>;
  /** A URL anyone can read the file from until `expiresAt`, for platforms that pull media by URL. */
  publicUrl(expiresAt: Date): string;
}

export interface PartToPublish {
  index: number;
  text: string;
  /** The post's media, on the first part only. */
  media: MediaToPublish[];
  material: PartMaterial;
  /** Set when an earlier attempt already published this part: skip it, use it as a reply parent. */
  published: PublishedPart | null;
  /**
   * What this publisher recorded (partProgressed) of work the platform is still doing for the
   * part, e.g. a container id or an upload session URL; null when nothing is under way.
   */
  progress: string | null;
}

export interface PublishAccount {
  id: string;
  platform: string;
  username: string;
  platformUserId: string | null;
}

export interface PublishRequest<C> {
  account: PublishAccount;
  credentials: C;
  parts: PartToPublish[];
  /** The post's type (`post`, `carousel`, `reel`, `story`, `short`, `thread`): what kind of post the platform makes. */
  postType: string;
  /** The platform's fields of the post for this account (`accountOverrides[].fields`); empty for none. */
  fields: Readonly<Record<string, unknown>>;
  /** When the first attempt of this target began (Mastodon keeps an Idempotency-Key one hour). */
  firstAttemptAt: Date;
  /**
   * True when an earlier attempt may have reached the platform without its result being stored;
   * still true when `publish` follows a reconcile that found nothing (a platform slow to list a
   * new post may then refuse this attempt's as a duplicate of it).
   */
  inDoubt: boolean;
  now: Date;
}

export interface PublishHooks<C> {
  /**
   * Refreshes the account's credentials: `refresh` is given the stored ones and returns the new
   * ones, which are stored before this resolves to them. Refreshes of one account are serialised
   * across workers, and when another publication has refreshed them since this one began, this
   * resolves to those without calling `refresh`. Rejects with what `refresh` rejects with.
   */
  refreshCredentials(refresh: (current: C) => Promise<C>): Promise<C>;
  /**
   * Records a part as published so that a later attempt skips it; best effort. Rejects only when
   * this attempt was let go (another attempt holds the target, or it ran past its time bound): the
   * publisher then sends nothing more.
   */
  partPublished(index: number, part: PublishedPart): Promise<void>;
  /**
   * Records how far the platform has got with a part (null: nothing under way), before anything
   * else is done with it, so the next look (or another worker) resumes it; best effort. Rejects
   * as partPublished does.
   */
  partProgressed(index: number, progress: string | null): Promise<void>;
}

/** What a platform says of a part an earlier attempt may have sent. */
export type Reconciliation =
  | { kind: 'found'; part: PublishedPart }
  | { kind: 'absent' }
  /** The platform's answer does not settle it: a person decides (the target ends `unknown`). */
  | { kind: 'cannot_tell'; message: string }
  /** The platform could not be asked now (network, 5xx, 429): asked again at the next attempt. */
  | { kind: 'unanswered'; message: string };

export type ErrorCategory = 'auth_expired' | 'user_content' | 'media_error' | 'rate_limited' | 'platform_error' | 'system_error';

export type PublishOutcome =
  | { kind: 'published'; parts: PublishedPart[] }
  | {
      kind: 'failed';
      category: ErrorCategory;
      /** The platform's own message where it gave one, fit to show a person. No tokens, no URLs with secrets. */
      message: string;
      /** A transient failure (network, 5xx, 429): the domain retries it with backoff. */
      retryable: boolean;
      /** The earliest time to try again (a 429's reset header); null to use the backoff. */
      retryAfter: Date | null;
      /** The request may have reached the platform (a timeout, a 5xx): the next attempt is in doubt. */
      mayHaveCommitted: boolean;
      /** The platform refused the stored credentials for good: the account needs a reconnect. */
      credentialsRevoked: boolean;
    }
  /**
   * The platform is still at work (a container processing, media being transcoded): look again
   * after `checkAfterMs` (the platform's documented pace). The target stays publishing, and the
   * next look calls `publish` again with each part's `progress`; no worker waits meanwhile.
   */
  | { kind: 'pending'; checkAfterMs: number }
  /** The outcome cannot be known and retrying could post twice: a person decides. */
  | { kind: 'unknown'; message: string };
