import type { OperationHandler } from '../contract/handler-types.js';
import { platformCatalogue } from '../../domain/platforms/live.js';
import type { OperationContext } from '../kit/context.js';

/** The same table the platform checks read, served as data, with how each connects on this server. */
export function listPlatformsHandler(ctx: OperationContext): OperationHandler<'listPlatforms'> {
  return () => Promise.resolve({ data: platformCatalogue(ctx.deps().oauth, ctx.deps().instanceOAuth) });
}
