import { Command, Option } from 'commander';
import { runCommand } from '../../run-command.js';

export function accountConnectCommand(): Command {
  return new Command('connect')
    .description('connect a social account, owned by a user or by an organization')
    .requiredOption('--platform <platform>', 'platform id, e.g. x, instagram, linkedin')
    .requiredOption('--username <username>', 'handle on the platform')
    .option('--display-name <name>', 'display name')
    .addOption(new Option('--user <id>', 'owning user').conflicts('org'))
    .addOption(new Option('--org <id>', 'owning organization').conflicts('user'))
    .action((opts: { platform: string; username: string; displayName?: string; user?: string; org?: string }, command: Command) => {
      const owner = opts.user !== undefined ? { userId: opts.user } : opts.org !== undefined ? { orgId: opts.org } : undefined;
      if (owner === undefined) return command.error('error: one of --user or --org is required');
      return runCommand(async ({ db }) => {
        // Loaded here, not at start: the platform rules it checks against are needed by account commands only.
        const { connectAccount } = await import('../../../domain/accounts.js');
        return connectAccount(db, { platform: opts.platform, username: opts.username, displayName: opts.displayName ?? null, owner });
      });
    });
}
