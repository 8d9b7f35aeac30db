import { Command } from 'commander';
import { createOrganization } from '../../../domain/users.js';
import { runCommand } from '../../run-command.js';

export function orgCreateCommand(): Command {
  return new Command('create')
    .description('create an organization')
    .requiredOption('--name <name>', 'organization name')
    .action((opts: { name: string }) => runCommand(({ db }) => createOrganization(db, opts.name)));
}
