import type { MediaToPublish, PartToPublish, PublishHooks, PublishOutcome, Reconciliation } from '../../../domain/ports/publisher.js';
import { failed, Halt, reconciliationOfThrown } from '../http-outcomes.js';
import { classify } from './classify.js';
import type { GraphApi, GraphParams, GraphResult } from './graph.js';

/**
 * The container road Instagram and Threads share (reference §2.2, §2.3, §4.2, §4.3): media Meta
 * pulls from Herald's public URLs into containers, which process (`IN_PROGRESS`) until `FINISHED`;
 * publishing a finished container makes the post live. Container ids are the part's progress
 * before anything else is done, so a look after a restart resumes them, and a container is
 * published once: a container already `PUBLISHED` is looked for, never published again.
 */

export type ContainerState = 'IN_PROGRESS' | 'FINISHED' | 'PUBLISHED' | 'ERROR' | 'EXPIRED';

/** A container's `status_code` (Instagram) or `status` (Threads); anything else is taken as still processing. */
export function containerState(value: unknown): ContainerState {
  return value === 'FINISHED' || value === 'PUBLISHED' || value === 'ERROR' || value === 'EXPIRED' ? value : 'IN_PROGRESS';
}

/** What a part records while its containers are under way. */
export interface ContainerProgress {
  /** Carousel items, created first. */
  children: string[];
  /** The container that is published: the carousel, or the single item; null until created. */
  container: string | null;
}

/** One platform's side of the road: its calls and its words. */
export interface ContainerPlatform {
  name: string;
  api: GraphApi;
  token: string;
  userId: string;
  now: Date;
  timeoutMs: number;
  /** How long to wait before looking at containers again: Meta's pace for what they hold. */
  checkAfterMs(media: readonly MediaToPublish[]): number;
  /** Reads a container's state and Meta's reason when it failed. */
  status(container: string): Promise<{ state: ContainerState; reason: string | null }>;
  /** The parameters of a carousel item, a carousel holding `children`, or the part's single container. */
  childParams(media: MediaToPublish, url: string): GraphParams;
  parentParams(part: PartToPublish, children: string[]): GraphParams;
  singleParams(part: PartToPublish, media: MediaToPublish | undefined, url: string | undefined): GraphParams;
  /** The path that creates containers and the path that publishes one. */
  createPath: string;
  publishPath: string;
}

/** Public media URLs stay valid two days past the attempt: Meta fetches while the container processes, up to its 24-hour life. */
const URL_LIFETIME_MS = 48 * 3_600_000;

export function parseContainerProgress(progress: string | null): ContainerProgress | null {
  if (progress === null) return null;
  try {
    const parsed = JSON.parse(progress) as Partial<ContainerProgress>;
    if (!Array.isArray(parsed.children) || !(typeof parsed.container === 'string' || parsed.container === null)) return null;
    return { children: parsed.children.filter((c): c is string => typeof c === 'string'), container: parsed.container };
  } catch {
    return null;
  }
}

/**
 * Moves a part's containers on: creates what is missing (recording each id at once), waits while
 * Meta processes, then publishes the container once. Resolves to the published media id, or to
 * the outcome that ends this look (`pending`, or a failure).
 */
export async function advanceContainers(
  platform: ContainerPlatform,
  part: PartToPublish,
  hooks: Pick<PublishHooks<unknown>, 'partProgressed'>,
): Promise<{ mediaId: string } | PublishOutcome> {
  const { api, name } = platform;
  const progress = parseContainerProgress(part.progress) ?? { children: [], container: null };
  const save = () => hooks.partProgressed(part.index, JSON.stringify(progress));
  const expires = new Date(platform.now.getTime() + URL_LIFETIME_MS);
  const carousel = part.media.length > 1;

  if (progress.container === null) {
    if (carousel) {
      for (const media of part.media.slice(progress.children.length)) {
        const url = media.publicUrl(expires);
        progress.children.push(await create(platform, platform.childParams(media, url), url));
        await save();
      }
      const states = await Promise.all(progress.children.map((child) => platform.status(child)));
      const broken = states.find((s) => s.state === 'ERROR' || s.state === 'EXPIRED');
      if (broken !== undefined) return await startOver(part, hooks, name, broken);
      if (states.some((s) => s.state !== 'FINISHED')) return { kind: 'pending', checkAfterMs: platform.checkAfterMs(part.media) };
      progress.container = await create(platform, platform.parentParams(part, progress.children));
    } else {
      const media = part.media[0];
      const url = media?.publicUrl(expires);
      progress.container = await create(platform, platform.singleParams(part, media, url), url);
    }
    await save();
  }

  const container = progress.container;
  const { state, reason } = await platform.status(container);
  if (state === 'ERROR' || state === 'EXPIRED') return startOver(part, hooks, name, { state, reason });
  if (state === 'IN_PROGRESS') return { kind: 'pending', checkAfterMs: platform.checkAfterMs(part.media) };
  if (state === 'PUBLISHED')
    // Published by an attempt whose answer was lost and not reconciled: never published twice.
    return {
      kind: 'unknown',
      message: `${name} says this post's container was published, but Herald could not tell which post it became; check the account`,
    };
  const published = await api<{ id?: unknown }>({
    method: 'POST',
    path: platform.publishPath,
    params: { creation_id: container },
    token: platform.token,
    timeoutMs: platform.timeoutMs,
  });
  if (!published.ok) {
    // Publishing before the container is ready (9007/2207027) is not a failure: look again later.
    if (published.failure.kind === 'http' && published.failure.error?.subcode === 2207027)
      return { kind: 'pending', checkAfterMs: platform.checkAfterMs(part.media) };
    return classify(name, published.failure, 'commit', platform.now);
  }
  const id = idOf(published.data);
  if (id === null) return failed('platform_error', `${name} answered a publish Herald cannot read`, { retryable: true, mayHaveCommitted: true });
  return { mediaId: id };
}

/** A container Meta could not process: its progress is cleared, so a retry starts with new containers. */
async function startOver(
  part: PartToPublish,
  hooks: Pick<PublishHooks<unknown>, 'partProgressed'>,
  name: string,
  broken: { state: ContainerState; reason: string | null },
): Promise<PublishOutcome> {
  await hooks.partProgressed(part.index, null);
  if (broken.state === 'EXPIRED') return failed('media_error', `${name} let the media container expire before it was published`, { retryable: true });
  return failed('media_error', `${name} could not process the media${broken.reason === null ? '' : `: ${broken.reason}`}`);
}

async function create(platform: ContainerPlatform, params: GraphParams, mediaUrl?: string): Promise<string> {
  const created = await platform.api<{ id?: unknown }>({
    method: 'POST',
    path: platform.createPath,
    params,
    token: platform.token,
    timeoutMs: platform.timeoutMs,
  });
  if (!created.ok) throw new Halt(classify(platform.name, created.failure, 'create', platform.now, mediaUrl));
  const id = idOf(created.data);
  if (id === null) throw new Halt(failed('platform_error', `${platform.name} answered a container Herald cannot read`, { retryable: true }));
  return id;
}

/** A Meta id as a string: numeric ids come as strings, but a number is read too. */
export function idOf(data: { id?: unknown }): string | null {
  const { id } = data;
  if (typeof id === 'string' && /^[0-9_]{1,64}$/.test(id)) return id;
  if (typeof id === 'number' && Number.isSafeInteger(id)) return String(id);
  return null;
}

/**
 * What an earlier attempt in doubt did with a part's container: published (then the post is
 * looked for with `find`), not published (sent again: the same container when finished), or a
 * question Meta did not answer.
 */
export async function reconcileContainer(
  platform: Pick<ContainerPlatform, 'status' | 'name'>,
  part: PartToPublish,
  find: () => Promise<Reconciliation>,
): Promise<Reconciliation> {
  const progress = parseContainerProgress(part.progress);
  // Nothing is published without a container whose id was recorded first.
  if (progress?.container === null || progress === null) return { kind: 'absent' };
  let state: ContainerState;
  try {
    state = (await platform.status(progress.container)).state;
  } catch (error) {
    return reconciliationOfThrown(error);
  }
  return state === 'PUBLISHED' ? find() : { kind: 'absent' };
}

/** A list call's answer as data, or a Halt: reads that fail say so. */
export function listed<T>(platform: Pick<ContainerPlatform, 'name' | 'now'>, result: GraphResult<{ data?: T[] }>): T[] {
  if (!result.ok) throw new Halt(classify(platform.name, result.failure, 'read', platform.now));
  return Array.isArray(result.data.data) ? result.data.data : [];
}
