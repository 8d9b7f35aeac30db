import type { OperationHandler } from '../contract/handler-types.js';
import { platformRules } from '../../domain/platforms/index.js';

/** The same table the platform checks read, served as data. */
export function listPlatformsHandler(): OperationHandler<'listPlatforms'> {
  return () => Promise.resolve({ data: [...platformRules] });
}
