import { Command, InvalidArgumentError } from 'commander';
import { s3LocationOf, type S3Location } from '../../../adapters/storage/s3-location.js';
import { readEnvironment } from '../../wiring/configuration.js';
import { runCommand } from '../../run-command.js';

function s3Url(value: string): S3Location {
  const location = s3LocationOf(value);
  if (location === undefined) throw new InvalidArgumentError('Expected s3://bucket or s3://bucket/prefix.');
  return location;
}

export function mediaMigrateCommand(): Command {
  return new Command('migrate')
    .description(
      'move every media file from HERALD_DATA_DIR/media to a bucket, each checked there (size and SHA-256) before its local copy goes; run again to finish a run cut short',
    )
    .requiredOption('--to <url>', 's3://bucket or s3://bucket/prefix: the HERALD_MEDIA_URL to start Herald with afterwards', s3Url)
    .action(async (opts: { to: S3Location }) => {
      // Loaded here, not at start: only this command and a server on a bucket need the AWS SDK.
      const [{ localMediaStorageOf, s3MediaStorageOf }, { migrateMediaToS3 }] = await Promise.all([
        import('../../wiring/dependencies.js'),
        import('../../../adapters/storage/media-migration.js'),
      ]);
      let failed = 0;
      await runCommand(async ({ db }) => {
        const env = readEnvironment();
        const counts = await migrateMediaToS3(db, localMediaStorageOf(env), await s3MediaStorageOf(env, opts.to), (id, outcome, so) => {
          const what = outcome.result === 'failed' ? `failed: ${outcome.reason}` : outcome.result;
          process.stderr.write(`herald media migrate: ${id} ${what} (moved ${so.moved}, skipped ${so.skipped}, failed ${so.failed})\n`);
        });
        failed = counts.failed;
        return counts;
      });
      // The counts are printed either way; a file left behind fails the run, so that a script runs it again.
      if (failed > 0) process.exitCode = 1;
    });
}
