import { randomUUID } from 'node:crypto';
import { Readable } from 'node:stream';
import type { PartToPublish, PublishedPart, Publisher, PublishHooks, PublishOutcome, PublishRequest, Reconciliation } from '../../../domain/ports/publisher.js';
import { postFormUpload, type FormFile } from '../form-upload.js';
import { failed, Halt, retryAfterHeader, type FailedOutcome, reconciliationOfThrown } from '../http-outcomes.js';
import { onBase, type OAuthTokens } from '../oauth.js';
import { restSession, type RestSession } from '../oauth-session.js';
import { publishParts } from '../publish-parts.js';
import type { OAuthAdapterOptions, RestResult } from '../rest-api.js';
import { createRedditApi, REDDIT_ENDPOINTS } from './api.js';

export type RedditCredentials = OAuthTokens;

/** `fetch` sends Reddit's User-Agent (see withUserAgent). */
type Options = OAuthAdapterOptions;

/** How far back, before the attempt began, a post in doubt is looked for (clock skew). */
const LOOK_BACK_MS = 2 * 60_000;
const LISTING_PAGE = 25;
/** Reddit lists an image or video post once it has processed it: looked for every 10 seconds, at most this many times. */
const MEDIA_CHECK_MS = 10_000;
const MEDIA_LOOKS = 30;

/**
 * Reddit wants a poster for a video, shown while the video processes; Herald has no frame of its
 * own to give, so it sends a plain dark 320x180 PNG, as PRAW sends its default poster.
 */
const POSTER_PNG = Buffer.from(
  'iVBORw0KGgoAAAANSUhEUgAAAUAAAAC0CAIAAABqhmJGAAABkUlEQVR42u3TAQkAAAzDsOnY/fu8jkEgCgpNe8CoSAAGBgwMGBgMDBgYMDBgYDAwYGDAwGBgwMCAgQEDg4EBAwMGBgwMBgYMDBgYDAwYGDAwYGAwMGBgwMCAgcHAgIEBA4OBAQMDBgYMDAYGDAwYGAysAhgYMDBgYDAwYGDAwICBwcCAgQEDg4EBAwMGBgwMBgYMDBgYMDAYGDAwYGAwMGBgwMCAgcHAgIEBAwMGBgMDBgYMDAYGDAwYGDAwGBgwMGBgMDBgYMDAgIHBwICBAQMDBgYDAwYGDAwGBgwMGBgwMBgYMDBgYMDAYGDAwICBwcCAgQEDAwYGAwMGBgwMGBgMDBgYMDAYGDAwYGDAwGBgwMCAgcHAgIEBAwMGBgMDBgYMDBgYDAwYGDAwGBgwMGBgwMBgYMDAgIEBA4OBAQMDBgYDAwYGDAwYGAwMGBgwMBhYBTAwYGDAwGBgwMCAgQEDg4EBAwMGBgMDBgYMDBgYDAwYGDAwYGAwMGBgwMBgYMDAgIEBA4OBAQMDBgYMDNseGxRzDKbNoIsAAAAASUVORK5CYII=',
  'base64',
);
const VIDEO_POSTER: Omit<FormFile, 'filename'> = {
  id: 'poster',
  mime: 'image/png',
  bytes: POSTER_PNG.length,
  open: () => Promise.resolve(Readable.from([POSTER_PNG])),
};

/** What an image or video post records: its uploads, and that its submit went (it is then looked for, never sent again). */
interface MediaProgress {
  url: string;
  /** A video's poster. */
  poster: string | null;
  submitted: boolean;
  looks: number;
}

/**
 * Posts to a subreddit (fields.subreddit, fields.title, flairId, nsfw, spoiler): the caption as
 * self text, a link (fields.url) with the caption as its body, one image or one video uploaded
 * through Reddit's media lease, or a gallery of 2–20 images with their alt texts as captions; the
 * first comment on the submission. Reddit answers many refusals as HTTP 200 with `json.errors`,
 * RATELIMIT among them. A post in doubt is looked for among the account's submissions (subreddit,
 * title, time) before anything is sent again; an image or video post, which Reddit lists only
 * once it has processed it, is looked for and never submitted twice.
 */
export function createRedditPublisher(options: Options): Publisher<RedditCredentials> {
  const api = createRedditApi(options.fetch, options.baseUrl);
  const origin = onBase(REDDIT_ENDPOINTS.api, options.baseUrl);
  const timeoutMs = options.requestTimeoutMs ?? 30_000;
  const session = (request: PublishRequest<RedditCredentials>, hooks: PublishHooks<RedditCredentials>) =>
    restSession({ displayName: 'Reddit', configName: 'REDDIT' }, options.oauth, api, request, hooks);

  return {
    newPartMaterial: (now) => ({ key: randomUUID(), createdAt: now.toISOString() }),

    async reconcile(request, part, hooks): Promise<Reconciliation> {
      if (part.index > 0)
        return {
          kind: 'cannot_tell',
          message:
            'Reddit cannot be asked whether an earlier attempt added this comment; check the post, then retry with includeUnknown=true if it is not there',
        };
      try {
        const found = await findSubmission(session(request, hooks), request);
        if (found.part !== null) return { kind: 'found', part: found.part };
        if (found.listed < LISTING_PAGE) return { kind: 'absent' };
        return {
          kind: 'cannot_tell',
          message:
            'The account has posted too much since the attempt to tell whether Reddit holds this post; check it, then retry with includeUnknown=true if it is not there',
        };
      } catch (error) {
        return reconciliationOfThrown(error);
      }
    },

    publish(request, hooks): Promise<PublishOutcome> {
      const reddit = session(request, hooks);
      return publishParts(request, hooks, 'Reddit', (part, done) =>
        part.index === 0 ? submit(reddit, request, part, hooks) : comment(reddit, request, part, done[0]?.platformPostId ?? ''),
      );
    },
  };

  async function submit(
    reddit: RestSession,
    request: PublishRequest<RedditCredentials>,
    part: PartToPublish,
    hooks: PublishHooks<RedditCredentials>,
  ): Promise<PublishedPart | PublishOutcome> {
    const { fields } = request;
    const common = {
      api_type: 'json',
      sr: String(fields.subreddit),
      title: String(fields.title),
      nsfw: fields.nsfw === true ? 'true' : 'false',
      spoiler: fields.spoiler === true ? 'true' : 'false',
      sendreplies: 'true',
      ...(typeof fields.flairId === 'string' ? { flair_id: fields.flairId } : {}),
    };
    if (part.media.length > 1) {
      const items = [];
      for (const media of part.media)
        items.push({ media_id: (await upload(reddit, request, media)).assetId, caption: (media.altText ?? '').slice(0, 180), outbound_url: '' });
      const made = await reddit.call<RedditAnswer>({
        method: 'POST',
        path: '/api/submit_gallery_post.json',
        json: { ...common, nsfw: fields.nsfw === true, spoiler: fields.spoiler === true, show_error_list: true, items, text: part.text },
        timeoutMs,
      });
      return submission(made, request) ?? failed('platform_error', 'Reddit answered a gallery Herald cannot read', { retryable: true, mayHaveCommitted: true });
    }
    const media = part.media[0];
    if (media === undefined) {
      // Reddit takes body text on every kind of post since 2022 (PRAW sends it beside a link's url).
      const kind: Record<string, string> = typeof fields.url === 'string' ? { kind: 'link', url: fields.url, resubmit: 'true' } : { kind: 'self' };
      const made = await reddit.call<RedditAnswer>({ method: 'POST', path: '/api/submit', ...form({ ...common, ...kind, text: part.text }), timeoutMs });
      return submission(made, request) ?? failed('platform_error', 'Reddit answered a post Herald cannot read', { retryable: true, mayHaveCommitted: true });
    }
    // An image or video post: Reddit answers without its id and lists it once processed, so it is looked for, never submitted twice.
    let progress = parseProgress(part.progress);
    const save = async (next: MediaProgress) => {
      progress = next;
      await hooks.partProgressed(part.index, JSON.stringify(next));
    };
    if (progress === null) {
      const { location } = await upload(reddit, request, media);
      const poster = media.kind === 'video' ? (await upload(reddit, request, VIDEO_POSTER)).location : null;
      await save({ url: location, poster, submitted: false, looks: 0 });
    }
    if (progress !== null && !progress.submitted) {
      await save({ ...progress, submitted: true });
      const kind: Record<string, string> = progress.poster === null ? { kind: 'image' } : { kind: 'video', video_poster_url: progress.poster };
      const made = await reddit.call<RedditAnswer>({
        method: 'POST',
        path: '/api/submit',
        ...form({ ...common, ...kind, url: progress.url, text: part.text }),
        timeoutMs,
      });
      const refused = refusal(made, request);
      if (refused !== null) {
        await hooks.partProgressed(part.index, null);
        return refused;
      }
    }
    const found = await findSubmission(reddit, request);
    if (found.part !== null) return found.part;
    const looks = (progress?.looks ?? 0) + 1;
    if (looks > MEDIA_LOOKS)
      return { kind: 'unknown', message: `Reddit accepted the ${media.kind} post but has not listed it on the account; check the subreddit` };
    if (progress !== null) await save({ ...progress, submitted: true, looks });
    return { kind: 'pending', checkAfterMs: MEDIA_CHECK_MS };
  }

  /** Uploads a file through Reddit's media lease (an S3 form upload, streamed); its asset id and where it lives. */
  async function upload(
    reddit: RestSession,
    request: PublishRequest<RedditCredentials>,
    file: Omit<FormFile, 'filename'>,
  ): Promise<{ assetId: string; location: string }> {
    const leased = await reddit.call<{ args?: { action?: unknown; fields?: { name?: unknown; value?: unknown }[] }; asset?: { asset_id?: unknown } }>({
      method: 'POST',
      path: '/api/media/asset.json',
      ...form({ filepath: `${file.id}.${file.mime.split('/')[1] ?? 'bin'}`, mimetype: file.mime }),
      timeoutMs,
    });
    if (!leased.ok) throw new Halt(classify(leased, request, false));
    const action = leased.data.args?.action;
    const assetId = leased.data.asset?.asset_id;
    if (typeof action !== 'string' || typeof assetId !== 'string')
      throw new Halt(failed('platform_error', 'Reddit answered a media lease Herald cannot read', { retryable: true }));
    // The lease names the upload host without a scheme (`//…`): it takes the API's (https in production).
    const url = new URL(action, origin).toString();
    const fields = (leased.data.args?.fields ?? []).flatMap((field) =>
      typeof field.name === 'string' ? [[field.name, typeof field.value === 'string' ? field.value : ''] as const] : [],
    );
    const answer = await postFormUpload(options.fetch, url, fields, { ...file, filename: file.id }, timeoutMs * 20);
    if (answer.status < 200 || answer.status > 299) {
      const code = /<Code>([^<]{1,100})<\/Code>/.exec(answer.body)?.[1] ?? String(answer.status);
      throw new Halt(
        failed('media_error', `Reddit's upload refused the ${file.mime.startsWith('image/') ? 'image' : 'video'} (${code})`, {
          retryable: answer.status >= 500,
        }),
      );
    }
    const location = /<Location>([^<]{1,2000})<\/Location>/.exec(answer.body)?.[1] ?? `${url}/${fields.find(([name]) => name === 'key')?.[1] ?? ''}`;
    return { assetId, location: location.replace(/&amp;/g, '&') };
  }

  async function comment(
    reddit: RestSession,
    request: PublishRequest<RedditCredentials>,
    part: PartToPublish,
    thing: string,
  ): Promise<PublishedPart | PublishOutcome> {
    const made = await reddit.call<{ json?: { errors?: unknown[]; data?: { things?: { data?: { name?: unknown; permalink?: unknown } }[] } } }>({
      method: 'POST',
      path: '/api/comment',
      ...form({ api_type: 'json', thing_id: thing, text: part.text }),
      timeoutMs,
    });
    const refused = refusal(made, request);
    if (refused !== null) return refused;
    const data = made.ok ? made.data.json?.data?.things?.[0]?.data : undefined;
    if (typeof data?.name !== 'string')
      return failed('platform_error', 'Reddit answered a comment Herald cannot read', { retryable: true, mayHaveCommitted: true });
    return { platformPostId: data.name, url: typeof data.permalink === 'string' ? `https://www.reddit.com${data.permalink}` : null, cid: null };
  }

  /** The account's submission with this subreddit and title since the attempt began, and how many the listing held. */
  async function findSubmission(reddit: RestSession, request: PublishRequest<RedditCredentials>): Promise<{ part: PublishedPart | null; listed: number }> {
    const listed = await reddit.call<{
      data?: { children?: { data?: { name?: unknown; subreddit?: unknown; title?: unknown; created_utc?: unknown; permalink?: unknown } }[] };
    }>({
      method: 'GET',
      path: `/user/${encodeURIComponent(request.account.username)}/submitted?sort=new&limit=${LISTING_PAGE}`,
      timeoutMs,
    });
    if (!listed.ok) throw new Halt(classify(listed, request, false));
    const children = listed.data.data?.children ?? [];
    const since = (request.firstAttemptAt.getTime() - LOOK_BACK_MS) / 1000;
    const wanted = String(request.fields.subreddit).toLowerCase();
    const match = children
      .map((child) => child.data)
      .find((post) => String(post?.subreddit).toLowerCase() === wanted && post?.title === request.fields.title && Number(post?.created_utc) >= since);
    if (typeof match?.name !== 'string') return { part: null, listed: children.length };
    return {
      part: { platformPostId: match.name, url: typeof match.permalink === 'string' ? `https://www.reddit.com${match.permalink}` : null, cid: null },
      listed: children.length,
    };
  }
}

type RedditAnswer = { json?: { errors?: unknown[]; ratelimit?: unknown; data?: { id?: unknown; name?: unknown; url?: unknown } } };

/** A submit's post, or its refusal as an outcome; null when the answer names no post. */
function submission(made: RestResult<RedditAnswer>, request: PublishRequest<RedditCredentials>): PublishedPart | FailedOutcome | null {
  const refused = refusal(made, request);
  if (refused !== null) return refused;
  const data = made.ok ? made.data.json?.data : undefined;
  const id = typeof data?.name === 'string' ? data.name : typeof data?.id === 'string' ? (data.id.startsWith('t3_') ? data.id : `t3_${data.id}`) : null;
  if (id === null) return null;
  return { platformPostId: id, url: typeof data?.url === 'string' ? data.url : null, cid: null };
}

/** A failed call, or a 200 whose `json.errors` refuses: the outcome; null when Reddit took it. */
function refusal(made: RestResult<{ json?: { errors?: unknown[]; ratelimit?: unknown } }>, request: PublishRequest<RedditCredentials>): FailedOutcome | null {
  if (!made.ok) return classify(made, request, true);
  const [first] = made.data.json?.errors ?? [];
  if (!Array.isArray(first)) return null;
  const [code, message] = first.map((x) => (typeof x === 'string' ? x : ''));
  const said = `Reddit: ${message ?? ''} (${code ?? 'error'})`;
  if (code === 'RATELIMIT') {
    const seconds = Number(made.data.json?.ratelimit);
    const minutes = Number(/([0-9]+) minute/.exec(message ?? '')?.[1] ?? 10);
    return failed('rate_limited', said, {
      retryable: true,
      retryAfter: new Date(request.now.getTime() + (Number.isFinite(seconds) && seconds > 0 ? seconds * 1000 : minutes * 60_000)),
    });
  }
  return failed('user_content', said);
}

function classify(made: Extract<RestResult<unknown>, { ok: false }>, request: PublishRequest<RedditCredentials>, creating: boolean): FailedOutcome {
  const { failure } = made;
  if (failure.kind === 'not_allowed') return failed('system_error', failure.message);
  if (failure.kind !== 'http') return failed('platform_error', failure.message, { retryable: true, mayHaveCommitted: creating });
  const { status, headers } = failure;
  if (status === 401)
    return failed('auth_expired', 'Reddit refused the access token (expired or revoked); connect the account again', { credentialsRevoked: true });
  if (status === 403) return failed('user_content', 'Reddit refused: the account may not post there (a private or banned subreddit, or a missing permission)');
  if (status === 429) {
    const reset = Number(headers.get('x-ratelimit-reset'));
    return failed('rate_limited', "Reddit's request limit for this app is used", {
      retryable: true,
      retryAfter: retryAfterHeader(headers) ?? new Date(request.now.getTime() + (Number.isFinite(reset) && reset > 0 ? reset * 1000 : 60_000)),
    });
  }
  if (status >= 500) return failed('platform_error', `Reddit answered ${status}`, { retryable: true, mayHaveCommitted: creating });
  return failed('user_content', `Reddit answered ${status}`);
}

/** A form body as Reddit's API reads it (urlencoded). */
function form(values: Record<string, string>): { bytes: Buffer; headers: Record<string, string> } {
  return { bytes: Buffer.from(new URLSearchParams(values).toString()), headers: { 'content-type': 'application/x-www-form-urlencoded' } };
}

function parseProgress(progress: string | null): MediaProgress | null {
  if (progress === null) return null;
  try {
    const parsed = JSON.parse(progress) as Partial<MediaProgress>;
    return typeof parsed.url === 'string'
      ? {
          url: parsed.url,
          poster: typeof parsed.poster === 'string' ? parsed.poster : null,
          submitted: parsed.submitted === true,
          looks: typeof parsed.looks === 'number' ? parsed.looks : 0,
        }
      : null;
  } catch {
    return null;
  }
}
