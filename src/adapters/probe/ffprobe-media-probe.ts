import { execFile } from 'node:child_process';
import { fileTypeFromFile } from 'file-type';
import { ProbeUnavailable, type MediaProbe, type ProbedMedia, type ProbeFailure } from '../../domain/ports/media-probe.js';

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

/** The executables the probe runs, by path. */
export interface ProbeTools {
  ffmpeg: string;
  ffprobe: string;
}

/**
 * Sniffs the type from the magic bytes (file-type), reads dimensions and duration with ffprobe, and
 * reads the whole file once with ffmpeg so a truncated or corrupt file is refused: images are
 * decoded, videos are demuxed packet by packet (cheap even for large files).
 */
export class FfprobeMediaProbe implements MediaProbe {
  /** Without tools, the binaries that npm installed with Herald: nothing outside npm, never the PATH. */
  constructor(private readonly tools?: ProbeTools) {}

  async probe(path: string): Promise<ProbedMedia | ProbeFailure> {
    return probeWithFfmpeg(path, this.tools ?? (await toolsFromNpm()));
  }
}

async function toolsFromNpm(): Promise<ProbeTools> {
  return {
    ffmpeg: await binaryFromNpm('ffmpeg', () => import('@ffmpeg-installer/ffmpeg')),
    ffprobe: await binaryFromNpm('ffprobe', () => import('@ffprobe-installer/ffprobe')),
  };
}

/** The installer packages throw on load when npm installed no binary for this platform. */
async function binaryFromNpm(tool: string, load: () => Promise<{ default: { path: string } }>): Promise<string> {
  try {
    return (await load()).default.path;
  } catch (err) {
    const code = (err as { code?: unknown } | undefined)?.code;
    throw new ProbeUnavailable(tool, typeof code === 'string' ? code : 'no binary for this platform in its npm package');
  }
}

async function probeWithFfmpeg(path: string, tools: ProbeTools): Promise<ProbedMedia | ProbeFailure> {
  const type = await fileTypeFromFile(path);
  const kind = type ? ACCEPTED[type.mime] : undefined;
  if (!type || !kind) return { problem: 'unsupported', mime: type?.mime ?? null };

  const intact = await run('ffmpeg', tools.ffmpeg, [
    '-v',
    'error',
    '-xerror',
    '-i',
    path,
    ...(kind === 'video' ? ['-map', '0', '-c', 'copy'] : []),
    '-f',
    'null',
    '-',
  ]);
  if (!intact.ok || intact.stderr.trim() !== '') return { problem: 'corrupt', mime: type.mime };

  const probe = await run('ffprobe', tools.ffprobe, ['-v', 'error', '-print_format', 'json', '-show_format', '-show_streams', path]);
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

function run(tool: string, executable: string, args: string[]): Promise<{ ok: boolean; stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    execFile(executable, args, { timeout: TOOL_TIMEOUT_MS, maxBuffer: 10 * 1024 * 1024 }, (error, stdout, stderr) => {
      // A tool that could not be started (missing, not executable) says nothing of the file: never call it corrupt.
      if (error?.syscall?.startsWith('spawn') && typeof error.code === 'string') reject(new ProbeUnavailable(tool, error.code));
      else resolve({ ok: error === null, stdout, stderr });
    });
  });
}
