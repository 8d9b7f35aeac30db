import { execFile } from 'node:child_process';
import { fileTypeFromFile } from 'file-type';
import type { MediaProbe, ProbedMedia, ProbeFailure } from './media-probe.js';

const ACCEPTED: Record<string, 'image' | 'video'> = {
  'image/jpeg': 'image',
  'image/png': 'image',
  'image/gif': 'image',
  'image/webp': 'image',
  'video/mp4': 'video',
  'video/quicktime': 'video',
  'video/webm': 'video',
};

const TOOL_TIMEOUT_MS = 120_000;

/**
 * Sniffs the type from the magic bytes (file-type), reads dimensions and duration with ffprobe, and
 * reads the whole file once with ffmpeg so a truncated or corrupt file is refused: images are
 * decoded, videos are demuxed packet by packet (cheap even for large files).
 */
export class FfprobeMediaProbe implements MediaProbe {
  probe(path: string): Promise<ProbedMedia | ProbeFailure> {
    return probeWithFfmpeg(path);
  }
}

async function probeWithFfmpeg(path: string): Promise<ProbedMedia | ProbeFailure> {
  const type = await fileTypeFromFile(path);
  const kind = type ? ACCEPTED[type.mime] : undefined;
  if (!type || !kind) return { problem: 'unsupported', mime: type?.mime ?? null };

  const intact = await run('ffmpeg', ['-v', 'error', '-xerror', '-i', path, ...(kind === 'video' ? ['-map', '0', '-c', 'copy'] : []), '-f', 'null', '-']);
  if (!intact.ok || intact.stderr.trim() !== '') return { problem: 'corrupt', mime: type.mime };

  const probe = await run('ffprobe', ['-v', 'error', '-print_format', 'json', '-show_format', '-show_streams', path]);
  if (!probe.ok) return { problem: 'corrupt', mime: type.mime };
  const info = JSON.parse(probe.stdout) as FfprobeOutput;
  const visual = info.streams?.find((s) => s.codec_type === 'video');
  if (!visual?.width || !visual.height) return { problem: 'corrupt', mime: type.mime };

  const quarterTurn = Math.abs(rotationOf(visual)) % 180 === 90;
  const seconds = Number(info.format?.duration);
  if (kind === 'video' && !(seconds > 0)) return { problem: 'corrupt', mime: type.mime };
  return {
    kind,
    mime: type.mime,
    width: quarterTurn ? visual.height : visual.width,
    height: quarterTurn ? visual.width : visual.height,
    durationMs: kind === 'video' ? Math.round(seconds * 1000) : null,
  };
}

interface FfprobeStream {
  codec_type?: string;
  width?: number;
  height?: number;
  tags?: { rotate?: string };
  side_data_list?: { rotation?: number }[];
}
interface FfprobeOutput {
  streams?: FfprobeStream[];
  format?: { duration?: string };
}

/** Phone videos are often stored landscape with a rotation to display them portrait. */
function rotationOf(stream: FfprobeStream): number {
  const side = stream.side_data_list?.find((d) => typeof d.rotation === 'number')?.rotation;
  return side ?? Number(stream.tags?.rotate ?? 0);
}

function run(command: string, args: string[]): Promise<{ ok: boolean; stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    execFile(command, args, { timeout: TOOL_TIMEOUT_MS, maxBuffer: 10 * 1024 * 1024 }, (error, stdout, stderr) => {
      // A missing tool is the server's fault, not the file's: fail loudly instead of calling the file corrupt.
      if (error?.code === 'ENOENT') reject(new Error(`${command} is not installed (Debian package ffmpeg)`));
      else resolve({ ok: error === null, stdout, stderr });
    });
  });
}
