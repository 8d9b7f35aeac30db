import type { PostStatus, TargetState } from '../../db/schema.js';

export interface TargetStanding {
  state: TargetState;
  /** A failed target waiting for an automatic retry. */
  retrying: boolean;
}

/** A due post's status, from its targets: still publishing while any target is unsettled. */
export function summarisePostStatus(targets: readonly TargetStanding[]): PostStatus {
  const unsettled = targets.some((t) => t.state === 'pending' || t.state === 'publishing' || (t.state === 'failed' && t.retrying));
  if (unsettled) return 'publishing';
  const published = targets.filter((t) => t.state === 'published').length;
  if (published === targets.length) return 'published';
  return published > 0 ? 'partial' : 'failed';
}
