import { Command } from 'commander';
import { readEnvironment } from '../../wiring/configuration.js';
import { mediaKind, nonNegativeInteger, positiveInteger } from '../../option-parsers.js';
import { runCommand } from '../../run-command.js';

interface MediaAddOptions {
  user: string;
  file?: string;
  kind?: 'image' | 'video';
  mime?: string;
  bytes?: number;
  width?: number;
  height?: number;
  durationMs?: number;
}

const STATED_FACTS = ['kind', 'mime', 'bytes', 'width', 'height', 'durationMs'] as const;

export function mediaAddCommand(): Command {
  return new Command('add')
    .description('add a media asset for a user: from a file (probed and stored like an upload), or from stated facts')
    .requiredOption('--user <id>', 'owning user')
    .option('--file <path>', 'an image or video file; its facts are read from its bytes')
    .option('--kind <kind>', 'image or video (without --file)', mediaKind)
    .option('--mime <mime>', 'mime type, e.g. image/jpeg (without --file)')
    .option('--bytes <n>', 'size in bytes (without --file)', nonNegativeInteger)
    .option('--width <px>', 'width in pixels', positiveInteger)
    .option('--height <px>', 'height in pixels', positiveInteger)
    .option('--duration-ms <ms>', 'video duration in milliseconds', nonNegativeInteger)
    .action(async (opts: MediaAddOptions, command: Command) => {
      // Loaded here, not at start: file probing (file-type) is needed by this command only.
      const { addMedia, addMediaFromFile } = await import('../../../domain/media/add-media.js');
      if (opts.file !== undefined) {
        if (STATED_FACTS.some((flag) => opts[flag] !== undefined))
          return command.error('error: --file reads the facts from the file; leave out --kind, --mime, --bytes, --width, --height and --duration-ms');
        const path = opts.file;
        const [{ mediaStorageOf }, { FfprobeMediaProbe }] = await Promise.all([
          import('../../wiring/dependencies.js'),
          import('../../../adapters/probe/ffprobe-media-probe.js'),
        ]);
        return runCommand(async ({ db }) => addMediaFromFile(db, await mediaStorageOf(readEnvironment()), new FfprobeMediaProbe(), opts.user, path));
      }
      if (opts.kind === undefined || opts.mime === undefined || opts.bytes === undefined) {
        return command.error('error: give --file, or all of --kind, --mime and --bytes');
      }
      const facts = {
        kind: opts.kind,
        mime: opts.mime,
        bytes: opts.bytes,
        width: opts.width ?? null,
        height: opts.height ?? null,
        durationMs: opts.durationMs ?? null,
      };
      return runCommand(({ db }) => addMedia(db, opts.user, facts));
    });
}
