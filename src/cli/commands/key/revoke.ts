import { Command } from 'commander';
import { revokeKey } from '../../../domain/api-keys.js';
import { runCommand } from '../../run-command.js';

export function keyRevokeCommand(): Command {
  return new Command('revoke')
    .description('revoke an API key; requests with it then get 401 Invalid API key')
    .requiredOption('--id <id>', 'key id (key_…)')
    .action((opts: { id: string }) => runCommand(({ db }) => revokeKey(db, opts.id, new Date())));
}
