import { platformRules } from '../domain/platforms/index.js';
import type { OperationHandler } from './handler-types.js';

/** The same table the platform checks read, served as data. */
export function listPlatformsHandler(): OperationHandler<'listPlatforms'> {
  return async () => ({ data: [...platformRules] });
}
