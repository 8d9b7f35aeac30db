import { Command } from 'commander';
import { createApiKey } from '../../../domain/api-keys.js';
import { futureTimestamp } from '../../option-parsers.js';
import { runCommand } from '../../run-command.js';

export function keyCreateCommand(): Command {
  return new Command('create')
    .description('create an API key for a user; the key is printed once and only its hash is kept')
    .requiredOption('--user <id>', 'user id')
    .option('--expires-at <iso8601>', 'expiry, e.g. 2030-01-01T00:00:00Z', futureTimestamp)
    .action((opts: { user: string; expiresAt?: Date }) => runCommand(({ db }) => createApiKey(db, opts.user, opts.expiresAt ?? null)));
}
