import { TID } from '@atproto/common-web';
import {
  ConnectError,
  type MediaToPublish,
  type PartToPublish,
  type PublishedPart,
  type CredentialPublisher,
  type PublishHooks,
  type PublishOutcome,
  type PublishRequest,
} from '../../../domain/ports/publisher.js';
import { failed, Halt, outcomeOfThrown, readMedia } from '../http-outcomes.js';
import { classify, classifyRefresh, connectError, isTokenError, type Step } from './classify.js';
import { detectFacets, imageEmbed, type BlobRef, type PostRecord, type StrongRef } from './record.js';
import { createXrpc, hostOf, type Xrpc, type XrpcCall, type XrpcFailure, type XrpcResult } from './xrpc.js';

/** What is stored for a Bluesky account: the session, never the app password. */
export interface BlueskyCredentials {
  service: string;
  did: string;
  handle: string;
  accessJwt: string;
  refreshJwt: string;
}

interface Session {
  did: string;
  handle: string;
  accessJwt: string;
  refreshJwt: string;
}

const COLLECTION = 'app.bsky.feed.post';

export function createBlueskyPublisher(options: { fetch: typeof globalThis.fetch; requestTimeoutMs?: number }): CredentialPublisher<BlueskyCredentials> {
  const timeoutMs = options.requestTimeoutMs ?? 30_000;
  return {
    async connect(input) {
      const service = input.service ?? '';
      const xrpc = createXrpc(options.fetch, service, timeoutMs);
      // One createSession only: its budget is small (30 per 5 minutes, 300 a day), and the tokens
      // it returns are what later publishing refreshes.
      const result = await xrpc<unknown>({
        method: 'com.atproto.server.createSession',
        json: { identifier: input.identifier, password: input.appPassword },
      });
      if (!result.ok) throw connectError(result.failure, service);
      if (!isSession(result.data)) throw new ConnectError('bad_answer', `${hostOf(service)} answered a session Herald cannot read`);
      const { did, handle, accessJwt, refreshJwt } = result.data;
      return { platformUserId: did, username: handle, displayName: null, credentials: { service, did, handle, accessJwt, refreshJwt } };
    },

    newPartMaterial(now) {
      return { key: TID.nextStr(), createdAt: now.toISOString() };
    },

    async publish(request, hooks) {
      const run = new PublishRun(createXrpc(options.fetch, request.credentials.service, timeoutMs), request, hooks);
      try {
        return await run.publish();
      } catch (thrown) {
        return outcomeOfThrown(thrown, 'Bluesky');
      }
    },
  };
}

class PublishRun {
  #credentials: BlueskyCredentials;
  #refreshed = false;

  constructor(
    private readonly xrpc: Xrpc,
    private readonly request: PublishRequest<BlueskyCredentials>,
    private readonly hooks: PublishHooks<BlueskyCredentials>,
  ) {
    this.#credentials = request.credentials;
  }

  async publish(): Promise<PublishOutcome> {
    const parts: PublishedPart[] = [];
    let root: StrongRef | undefined;
    let parent: StrongRef | undefined;
    for (const part of [...this.request.parts].sort((a, b) => a.index - b.index)) {
      let published = part.published;
      if (published === null) {
        published = await this.#publishPart(part, root === undefined || parent === undefined ? undefined : { root, parent });
        await this.hooks.partPublished(part.index, published);
      }
      if (published.cid === null) throw new Halt(failed('system_error', `Part ${part.index} was recorded as published without its record CID`));
      parent = { uri: published.platformPostId, cid: published.cid };
      root ??= parent;
      parts.push(published);
    }
    return { kind: 'published', parts };
  }

  async #publishPart(part: PartToPublish, reply: PostRecord['reply']): Promise<PublishedPart> {
    if (part.media.some((media) => media.kind !== 'image')) throw new Halt(failed('media_error', 'Publishing a video to Bluesky is not supported yet'));
    const images: { media: MediaToPublish; blob: BlobRef }[] = [];
    for (const media of part.media) {
      const uploaded = await this.#authed<{ blob: BlobRef }>({
        method: 'com.atproto.repo.uploadBlob',
        bytes: { data: await readMedia(media), mime: media.mime },
      });
      if (!uploaded.ok) throw this.#halt(uploaded.failure, 'upload');
      images.push({ media, blob: uploaded.data.blob });
    }
    const facets = await detectFacets(part.text, (handle) => this.#resolveHandle(handle));
    const record: PostRecord = {
      $type: 'app.bsky.feed.post',
      text: part.text,
      createdAt: part.material.createdAt,
      ...(facets === undefined ? {} : { facets }),
      ...(images.length === 0 ? {} : { embed: imageEmbed(images) }),
      ...(reply === undefined ? {} : { reply }),
    };
    const rkey = part.material.key;
    // putRecord at the rkey chosen before the first attempt, never createRecord: sending the same
    // record again is a no-op on the PDS, so a retry after a lost answer cannot post twice.
    const result = await this.#authed<StrongRef>({
      method: 'com.atproto.repo.putRecord',
      json: { repo: this.#credentials.did, collection: COLLECTION, rkey, record, swapRecord: null, validate: true },
    });
    let written: StrongRef;
    if (result.ok) written = result.data;
    // InvalidSwap with swapRecord null: a record already sits at this rkey with other bytes (a
    // mention that resolved differently, an image re-encoded since). Nobody but Herald writes at
    // an rkey it drew for this part, so that record IS this part from an earlier attempt whose
    // answer was lost: it is published, and the existing record is the one to point at.
    else if (result.failure.kind === 'http' && result.failure.error === 'InvalidSwap') written = await this.#existing(rkey);
    else throw this.#halt(result.failure, 'write');
    return {
      platformPostId: written.uri,
      url: `https://bsky.app/profile/${this.#credentials.handle}/post/${rkey}`,
      cid: written.cid,
    };
  }

  async #existing(rkey: string): Promise<StrongRef> {
    const found = await this.xrpc<StrongRef>({ method: 'com.atproto.repo.getRecord', query: { repo: this.#credentials.did, collection: COLLECTION, rkey } });
    if (!found.ok) throw this.#halt(found.failure, 'read');
    return { uri: found.data.uri, cid: found.data.cid };
  }

  /** A handle's DID, or null when it cannot be had: the mention is then left as plain text. */
  async #resolveHandle(handle: string): Promise<string | null> {
    const result = await this.xrpc<{ did?: unknown }>({ method: 'com.atproto.identity.resolveHandle', query: { handle } });
    return result.ok && typeof result.data.did === 'string' && result.data.did.startsWith('did:') ? result.data.did : null;
  }

  /** An authenticated call; an expired or refused access token is refreshed once per run and the call repeated. */
  async #authed<T>(call: Omit<XrpcCall, 'token'>): Promise<XrpcResult<T>> {
    const result = await this.xrpc<T>({ ...call, token: this.#credentials.accessJwt });
    if (result.ok || !isTokenError(result.failure) || this.#refreshed) return result;
    await this.#refresh();
    return this.xrpc<T>({ ...call, token: this.#credentials.accessJwt });
  }

  #halt(failure: XrpcFailure, step: Step): Halt {
    return new Halt(classify(failure, step, this.#credentials.service));
  }

  async #refresh(): Promise<void> {
    this.#refreshed = true;
    // Through the token source: the PDS rotates the refresh token, so refreshes of one account
    // take turns, the new pair is stored before it is used, and one another publication has just
    // made is taken as it is.
    this.#credentials = await this.hooks
      .refreshCredentials(async (current) => {
        const result = await this.xrpc<unknown>({ method: 'com.atproto.server.refreshSession', post: true, token: current.refreshJwt });
        if (!result.ok) throw new Halt(classifyRefresh(result.failure, current.service));
        if (!isSession(result.data))
          throw new Halt(failed('platform_error', `${hostOf(current.service)} answered a session Herald cannot read`, { retryable: true }));
        const { handle, accessJwt, refreshJwt } = result.data;
        return { ...current, handle, accessJwt, refreshJwt };
      })
      .catch((error: unknown) => {
        if (error instanceof Halt) throw error;
        throw new Halt(failed('system_error', 'Herald could not store the refreshed Bluesky session', { retryable: true }));
      });
  }
}

/** A session as the PDS answers it; checked, since it is stored and its handle goes into URLs. */
function isSession(data: unknown): data is Session {
  if (typeof data !== 'object' || data === null) return false;
  const { did, handle, accessJwt, refreshJwt } = data as Record<string, unknown>;
  return [did, handle, accessJwt, refreshJwt].every((value) => typeof value === 'string' && value !== '');
}
