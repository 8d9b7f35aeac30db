import { Command } from 'commander';
import { removeMember } from '../../../domain/users.js';
import { runCommand } from '../../run-command.js';

export function orgRemoveMemberCommand(): Command {
  return new Command('remove-member')
    .description("remove a user from an organization: their posts not yet published fail on the organization's accounts")
    .requiredOption('--org <id>', 'organization id')
    .requiredOption('--user <id>', 'user id')
    .action((opts: { org: string; user: string }) => runCommand(({ db }) => removeMember(db, opts.org, opts.user)));
}
