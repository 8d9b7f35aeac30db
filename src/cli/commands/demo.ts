import { Command } from 'commander';
import { readEnvironment } from '../../config/environment.js';
import { migrateToLatest } from '../../data/migrate.js';
import { seedDemo } from '../../domain/demo.js';
import { runCommand } from '../run-command.js';

export function demoCommand(): Command {
  return new Command('demo')
    .description('create a demo user with three accounts, two media assets and a key, and print a curl to try')
    .action(() =>
      runCommand(
        async ({ db }) => {
          await migrateToLatest(db);
          const env = readEnvironment();
          return seedDemo(db, `http://${env.host}:${env.port}`);
        },
        { requireMigrated: false },
      ),
    );
}
