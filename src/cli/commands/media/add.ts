import { Command } from 'commander';
import { addMedia } from '../../../domain/media/add-media.js';
import { mediaKind, nonNegativeInteger, positiveInteger } from '../../option-parsers.js';
import { runCommand } from '../../run-command.js';

interface MediaAddOptions {
  user: string;
  kind: 'image' | 'video';
  mime: string;
  bytes: number;
  width?: number;
  height?: number;
  durationMs?: number;
}

export function mediaAddCommand(): Command {
  return new Command('add')
    .description("record a media asset's facts for a user")
    .requiredOption('--user <id>', 'owning user')
    .requiredOption('--kind <kind>', 'image or video', mediaKind)
    .requiredOption('--mime <mime>', 'mime type, e.g. image/jpeg')
    .requiredOption('--bytes <n>', 'size in bytes', nonNegativeInteger)
    .option('--width <px>', 'width in pixels', positiveInteger)
    .option('--height <px>', 'height in pixels', positiveInteger)
    .option('--duration-ms <ms>', 'video duration in milliseconds', nonNegativeInteger)
    .action((opts: MediaAddOptions) =>
      runCommand(({ db }) =>
        addMedia(db, opts.user, {
          kind: opts.kind,
          mime: opts.mime,
          bytes: opts.bytes,
          width: opts.width ?? null,
          height: opts.height ?? null,
          durationMs: opts.durationMs ?? null,
        }),
      ),
    );
}
