#!/usr/bin/env -S node --max-old-space-size=512 --no-allocation-site-pretenuring --single-threaded-gc --max-semi-space-size=16
import { readFileSync } from 'node:fs';
import { Command } from 'commander';
import { accountConnectCommand } from './commands/account/connect.js';
import { accountDisconnectCommand } from './commands/account/disconnect.js';
import { dbMigrateCommand } from './commands/db/migrate.js';
import { demoCommand } from './commands/demo.js';
import { keyCreateCommand } from './commands/key/create.js';
import { keyListCommand } from './commands/key/list.js';
import { keyRevokeCommand } from './commands/key/revoke.js';
import { mediaAddCommand } from './commands/media/add.js';
import { mediaMigrateCommand } from './commands/media/migrate.js';
import { orgAddMemberCommand } from './commands/org/add-member.js';
import { orgCreateCommand } from './commands/org/create.js';
import { orgRemoveMemberCommand } from './commands/org/remove-member.js';
import { serveCommand } from './commands/serve.js';
import { userCreateCommand } from './commands/user/create.js';
import { workerCommand } from './commands/worker.js';

/**
 * `herald`: the operator's CLI. Every command prints one JSON object, or one error line and exits non-zero.
 * A command that needs a heavy module (the HTTP stack, file probing, the platform rules) imports it
 * in its action, so a call loads only what it uses (see `npm run bench:startup`).
 */
// package.json is two folders up from both src/cli/main.ts and the built dist/cli/herald.js.
const { version } = JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as { version: string };

const program = new Command('herald')
  .description('Herald operator CLI')
  .version(version, '-V, --version', 'print the version')
  .addCommand(serveCommand())
  .addCommand(workerCommand())
  .addCommand(new Command('db').description('database').addCommand(dbMigrateCommand()))
  .addCommand(new Command('user').description('users').addCommand(userCreateCommand()))
  .addCommand(
    new Command('org').description('organizations').addCommand(orgCreateCommand()).addCommand(orgAddMemberCommand()).addCommand(orgRemoveMemberCommand()),
  )
  .addCommand(new Command('key').description('API keys').addCommand(keyCreateCommand()).addCommand(keyListCommand()).addCommand(keyRevokeCommand()))
  .addCommand(new Command('account').description('connected accounts').addCommand(accountConnectCommand()).addCommand(accountDisconnectCommand()))
  .addCommand(new Command('media').description('media assets').addCommand(mediaAddCommand()).addCommand(mediaMigrateCommand()))
  .addCommand(demoCommand());

/** Commander's own errors (unknown flag, missing value) become one line too, on every subcommand. */
function oneLineErrors(command: Command): void {
  command.configureOutput({
    outputError: (text, write) =>
      write(
        `herald: ${
          text
            .trim()
            .replace(/^error: /, '')
            .split('\n')[0]
        }\n`,
      ),
  });
  command.commands.forEach(oneLineErrors);
}
oneLineErrors(program);

await program.parseAsync(process.argv);
