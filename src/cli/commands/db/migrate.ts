import { Command } from 'commander';
import { migrateToLatest } from '../../../db/migrate.js';
import { runCommand } from '../../run-command.js';

export function dbMigrateCommand(): Command {
  return new Command('migrate')
    .description('apply pending migrations')
    .action(() => runCommand(async ({ db }) => ({ migrated: await migrateToLatest(db) }), { requireMigrated: false }));
}
