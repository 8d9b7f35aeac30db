import { Command, Option } from 'commander';
import { readEnvironment } from '../../wiring/configuration.js';
import type { AccountConnectInput } from '../../../domain/api-types.js';
import { readSecretArgument } from '../../option-parsers.js';
import { runCommand } from '../../run-command.js';
import { credentialFields } from '../../../domain/platforms/live.js';

function kebab(key: string): string {
  return key.replace(/[A-Z]/g, (letter) => `-${letter.toLowerCase()}`);
}

interface ConnectOptions extends Partial<Record<string, string>> {
  platform: string;
  username?: string;
  displayName?: string;
  user?: string;
  org?: string;
}

/**
 * `herald account connect`: a sandbox account from --username (as before), or a live Bluesky or
 * Mastodon account from its credentials, verified with the platform exactly as the API does.
 */
export function accountConnectCommand(): Command {
  const command = new Command('connect')
    .description('connect a social account, owned by a user or by an organization: sandbox with --username, live with credentials')
    .requiredOption('--platform <platform>', 'platform id, e.g. x, instagram, linkedin, bluesky, mastodon')
    .option('--username <username>', 'handle on the platform (sandbox accounts)')
    .option('--display-name <name>', 'display name (sandbox accounts)')
    .addOption(new Option('--user <id>', 'owning user').conflicts('org'))
    .addOption(new Option('--org <id>', 'owning organization').conflicts('user'));
  // One flag per credential of the live platforms' descriptors: --app-password for appPassword.
  for (const field of credentialFields()) command.option(`--${kebab(field.key)} <value>`, field.help);
  return command.action((opts: ConnectOptions, self: Command) => {
    const owner = opts.user !== undefined ? { userId: opts.user } : opts.org !== undefined ? { orgId: opts.org } : undefined;
    if (owner === undefined) return self.error('error: one of --user or --org is required');
    const fields = credentialFields();
    const credentialFlags = Object.fromEntries(fields.map((field) => [field.key, opts[field.key]]));
    const live = Object.values(credentialFlags).some((v) => v !== undefined);
    if (!live && opts.username === undefined) return self.error('error: --username is required for a sandbox account (or give credentials for a live one)');
    return runCommand(async ({ db }) => {
      if (!live) {
        // Loaded here, not at start: the platform rules it checks against are needed by account commands only.
        const { connectAccount } = await import('../../../domain/accounts.js');
        return connectAccount(db, { platform: opts.platform, username: opts.username ?? '', displayName: opts.displayName ?? null, owner });
      }
      const credentials: Record<string, string> = {};
      for (const field of fields) {
        const value = credentialFlags[field.key];
        if (value !== undefined) credentials[field.key] = field.secret ? await readSecretArgument(value) : value;
      }
      const [{ connectAccountFor }, { createDependencies }] = await Promise.all([
        import('../../../domain/live-accounts.js'),
        import('../../wiring/dependencies.js'),
      ]);
      const deps = await createDependencies(readEnvironment(), db, { info: () => {}, error: () => {} });
      // The platform is checked by the domain's connect rules (only Bluesky and Mastodon connect live).
      const input: AccountConnectInput = { platform: opts.platform as AccountConnectInput['platform'], credentials };
      if (opts.username !== undefined) input.username = opts.username;
      const { account } = await connectAccountFor(deps, owner, input);
      return account;
    });
  });
}
