import { Command } from 'commander';
import { readEnvironment } from '../../wiring/configuration.js';
import { runCommand } from '../../run-command.js';

export function accountDisconnectCommand(): Command {
  return new Command('disconnect')
    .description('disconnect an account: it leaves listings, can no longer be posted to, and its tokens are revoked where the platform allows')
    .requiredOption('--id <id>', 'account id (acc_…)')
    .action((opts: { id: string }) =>
      runCommand(async ({ db }) => {
        // Loaded here, not at start, like in `account connect`.
        const [{ disconnectAccount }, { createDependencies }] = await Promise.all([
          import('../../../domain/accounts.js'),
          import('../../wiring/dependencies.js'),
        ]);
        const deps = await createDependencies(readEnvironment(), db, { info: () => {}, error: () => {} });
        return disconnectAccount(deps, opts.id, new Date());
      }),
    );
}
