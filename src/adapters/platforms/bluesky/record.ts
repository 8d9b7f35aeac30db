import type { Facet } from '@atproto/api';
import type { MediaToPublish } from '../../../domain/ports/publisher.js';

/** A blob as uploadBlob returns it, put into the record unchanged. */
export type BlobRef = Record<string, unknown>;

export interface StrongRef {
  uri: string;
  cid: string;
}

export interface PostRecord {
  $type: 'app.bsky.feed.post';
  text: string;
  createdAt: string;
  facets?: Facet[];
  embed?: {
    $type: 'app.bsky.embed.images';
    images: { image: BlobRef; alt: string; aspectRatio?: { width: number; height: number } }[];
  };
  reply?: { root: StrongRef; parent: StrongRef };
}

/**
 * Links, hashtags and mentions, with UTF-8 byte offsets. A mention whose handle does not resolve
 * stays plain text: its facet is dropped rather than sent with an empty DID, which the PDS refuses.
 */
export async function detectFacets(text: string, resolveHandle: (handle: string) => Promise<string | null>): Promise<Facet[] | undefined> {
  // Loaded on the first Bluesky post, not at start: the client and its lexicons are the biggest thing Herald would load (~0.1 s).
  const { facetsWithoutResolution } = await import('./rich-text.js');
  const facets: Facet[] = [];
  for (const facet of facetsWithoutResolution(text)) {
    const features: Facet['features'] = [];
    for (const feature of facet.features) {
      if (feature.$type === 'app.bsky.richtext.facet#mention') {
        const did = await resolveHandle((feature as { did: string }).did);
        if (did !== null) features.push({ ...feature, did } as Facet['features'][number]);
      } else {
        features.push(feature);
      }
    }
    if (features.length > 0) facets.push({ ...facet, features });
  }
  return facets.length > 0 ? facets : undefined;
}

export function imageEmbed(images: { media: MediaToPublish; blob: BlobRef }[]): PostRecord['embed'] {
  return {
    $type: 'app.bsky.embed.images',
    images: images.map(({ media, blob }) => ({
      image: blob,
      alt: media.altText ?? '',
      // The lexicon wants integers of at least 1; unknown or odd sizes are left out rather than guessed.
      ...(isDimension(media.width) && isDimension(media.height) ? { aspectRatio: { width: media.width, height: media.height } } : {}),
    })),
  };
}

function isDimension(value: number | null): value is number {
  return value !== null && Number.isInteger(value) && value >= 1;
}
