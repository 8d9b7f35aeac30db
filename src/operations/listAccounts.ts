import { listAccounts } from '../domain/accounts.js';
import { callerOf } from './caller.js';
import type { OperationContext } from './context.js';
import type { OperationHandler } from './handler-types.js';

export function listAccountsHandler(ctx: OperationContext): OperationHandler<'listAccounts'> {
  return async (req) => listAccounts(ctx.db(), callerOf(req).userId);
}
