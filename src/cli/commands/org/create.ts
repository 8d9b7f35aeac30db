import { Command } from 'commander';
import { createOrganization } from '../../../domain/users.js';
import { runCommand } from '../../run-command.js';

export function orgCreateCommand(): Command {
  return new Command('create')
    .description('create an organization')
    .requiredOption('--name <name>', 'organization name')
    .option('--owner <id>', 'user id of its owner, who becomes its first member')
    .action((opts: { name: string; owner?: string }) => runCommand(({ db }) => createOrganization(db, opts.name, opts.owner ?? null)));
}
