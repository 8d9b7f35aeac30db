import { Command } from 'commander';
import { addMember } from '../../../domain/users.js';
import { runCommand } from '../../run-command.js';

export function orgAddMemberCommand(): Command {
  return new Command('add-member')
    .description("add a user to an organization (they can then post to the organization's accounts)")
    .requiredOption('--org <id>', 'organization id')
    .requiredOption('--user <id>', 'user id')
    .option('--owner', "as an owner, who may also disconnect the organization's accounts (an existing member becomes one)")
    .action((opts: { org: string; user: string; owner?: boolean }) => runCommand(({ db }) => addMember(db, opts.org, opts.user, opts.owner === true)));
}
