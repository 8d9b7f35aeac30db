import { Command } from 'commander';
import { disconnectAccount } from '../../../domain/accounts.js';
import { runCommand } from '../../run-command.js';

export function accountDisconnectCommand(): Command {
  return new Command('disconnect')
    .description('disconnect an account: it leaves listings and can no longer be posted to')
    .requiredOption('--id <id>', 'account id (acc_…)')
    .action((opts: { id: string }) => runCommand(({ db }) => disconnectAccount(db, opts.id, new Date())));
}
