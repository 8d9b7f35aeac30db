import { Command } from 'commander';
import { listApiKeys } from '../../../domain/api-keys.js';
import { runCommand } from '../../run-command.js';

export function keyListCommand(): Command {
  return new Command('list')
    .description("list a user's API keys with their state (active, expired, revoked); the keys themselves are never shown again")
    .requiredOption('--user <id>', 'user id')
    .action((opts: { user: string }) => runCommand(({ db }) => listApiKeys(db, opts.user, new Date())));
}
