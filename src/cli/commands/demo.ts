import { Command } from 'commander';
import { readEnvironment } from '../wiring/configuration.js';
import { migrateToLatest } from '../../db/migrate.js';
import { runCommand } from '../run-command.js';

export function demoCommand(): Command {
  return new Command('demo').description('create a demo user with three accounts, two media assets and a key, and print a curl to try').action(() =>
    runCommand(
      async ({ db }) => {
        // Loaded here, not at start: the demo's media pull in file probing, which other commands skip.
        const { seedDemo } = await import('../../domain/demo.js');
        await migrateToLatest(db);
        const env = readEnvironment();
        return seedDemo(db, `http://${env.host}:${env.port}`);
      },
      { requireMigrated: false },
    ),
  );
}
