import { Command } from 'commander';
import { runCommand } from '../../run-command.js';

export function accountDisconnectCommand(): Command {
  return new Command('disconnect')
    .description('disconnect an account: it leaves listings and can no longer be posted to')
    .requiredOption('--id <id>', 'account id (acc_…)')
    .action((opts: { id: string }) =>
      runCommand(async ({ db }) => {
        // Loaded here, not at start, like in `account connect`.
        const { disconnectAccount } = await import('../../../domain/accounts.js');
        return disconnectAccount(db, opts.id, new Date());
      }),
    );
}
