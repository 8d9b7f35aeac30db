import type { OperationHandler } from '../contract/handler-types.js';
import { listAccounts } from '../../domain/accounts.js';
import { callerOf } from '../kit/caller.js';
import type { OperationContext } from '../kit/context.js';

export function listAccountsHandler(ctx: OperationContext): OperationHandler<'listAccounts'> {
  return async (req) => listAccounts(ctx.db(), callerOf(req).userId);
}
