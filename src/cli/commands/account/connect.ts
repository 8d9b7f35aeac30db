import { Command, Option } from 'commander';
import { readEnvironment } from '../../../config/environment.js';
import type { AccountConnectInput } from '../../../domain/api-types.js';
import { readSecretArgument } from '../../option-parsers.js';
import { runCommand } from '../../run-command.js';

interface ConnectOptions {
  platform: string;
  username?: string;
  displayName?: string;
  user?: string;
  org?: string;
  service?: string;
  identifier?: string;
  appPassword?: string;
  instance?: string;
  accessToken?: string;
}

/**
 * `herald account connect`: a sandbox account from --username (as before), or a live Bluesky or
 * Mastodon account from its credentials, verified with the platform exactly as the API does.
 */
export function accountConnectCommand(): Command {
  return new Command('connect')
    .description('connect a social account, owned by a user or by an organization: sandbox with --username, live with credentials')
    .requiredOption('--platform <platform>', 'platform id, e.g. x, instagram, linkedin, bluesky, mastodon')
    .option('--username <username>', 'handle on the platform (sandbox accounts)')
    .option('--display-name <name>', 'display name (sandbox accounts)')
    .addOption(new Option('--user <id>', 'owning user').conflicts('org'))
    .addOption(new Option('--org <id>', 'owning organization').conflicts('user'))
    .option('--service <url>', 'Bluesky: the PDS, e.g. https://bsky.social')
    .option('--identifier <handle>', 'Bluesky: handle, DID or email')
    .option('--app-password <password>', "Bluesky: an app password, or '-' to read it from stdin")
    .option('--instance <url>', 'Mastodon: the instance, e.g. https://mastodon.social')
    .option('--access-token <token>', "Mastodon: an access token, or '-' to read it from stdin")
    .action((opts: ConnectOptions, command: Command) => {
      const owner = opts.user !== undefined ? { userId: opts.user } : opts.org !== undefined ? { orgId: opts.org } : undefined;
      if (owner === undefined) return command.error('error: one of --user or --org is required');
      const credentialFlags = { service: opts.service, identifier: opts.identifier, appPassword: opts.appPassword, instance: opts.instance, accessToken: opts.accessToken };
      const live = Object.values(credentialFlags).some((v) => v !== undefined);
      if (!live && opts.username === undefined) return command.error('error: --username is required for a sandbox account (or give credentials for a live one)');
      return runCommand(async ({ db }) => {
        if (!live) {
          // Loaded here, not at start: the platform rules it checks against are needed by account commands only.
          const { connectAccount } = await import('../../../domain/accounts.js');
          return connectAccount(db, { platform: opts.platform, username: opts.username ?? '', displayName: opts.displayName ?? null, owner });
        }
        const credentials: Record<string, string> = {};
        for (const [key, value] of Object.entries(credentialFlags)) {
          if (value !== undefined) credentials[key] = await readSecretArgument(value);
        }
        const [{ connectAccountFor }, { createAccountParts }] = await Promise.all([
          import('../../../domain/live-accounts.js'),
          import('../../../worker/runtime.js'),
        ]);
        const parts = await createAccountParts(readEnvironment(), db);
        // The platform is checked by the domain's connect rules (only Bluesky and Mastodon connect live).
        const input: AccountConnectInput = { platform: opts.platform as AccountConnectInput['platform'], credentials };
        if (opts.username !== undefined) input.username = opts.username;
        const { account } = await connectAccountFor({ db, ...parts }, owner, input);
        return account;
      });
    });
}
