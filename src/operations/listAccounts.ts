import type { OperationHandler } from '../contract/handler-types.js';
import { listAccounts } from '../domain/accounts.js';
import { callerOf } from '../operations-kit/caller.js';
import type { OperationContext } from '../operations-kit/context.js';

export function listAccountsHandler(ctx: OperationContext): OperationHandler<'listAccounts'> {
  return async (req) => listAccounts(ctx.db(), callerOf(req).userId);
}
