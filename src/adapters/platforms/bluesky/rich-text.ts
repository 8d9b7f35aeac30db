import { RichText, type Facet } from '@atproto/api';

/**
 * The links, hashtags and mentions Bluesky's own client finds in a text, mentions still naming a
 * handle. A module of its own so that the client is loaded only when a Bluesky post is made.
 */
export function facetsWithoutResolution(text: string): Facet[] {
  const rich = new RichText({ text });
  rich.detectFacetsWithoutResolution();
  return rich.facets ?? [];
}
