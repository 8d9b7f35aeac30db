import { Command } from 'commander';
import { createUser } from '../../../domain/users.js';
import { runCommand } from '../../run-command.js';

export function userCreateCommand(): Command {
  return new Command('create')
    .description('create a user')
    .option('--name <name>', 'display name')
    .action((opts: { name?: string }) => runCommand(({ db }) => createUser(db, opts.name ?? null)));
}
