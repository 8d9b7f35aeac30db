import type { OperationHandler } from '../contract/handler-types.js';

/** Answers while the process can answer at all; it deliberately checks nothing else. */
export function getLivenessHandler(): OperationHandler<'getLiveness'> {
  return () => Promise.resolve({ status: 'ok' as const });
}
