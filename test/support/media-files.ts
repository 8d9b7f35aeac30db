import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import ffmpeg from '@ffmpeg-installer/ffmpeg';

/**
 * Small media files made on the spot with the ffmpeg binary npm installed (the one the service
 * probes with), so the repo ships no media and the tests need nothing outside npm.
 */
export interface MediaFiles {
  jpeg1080x1350: Buffer;
  png64: Buffer;
  mp4Portrait: Buffer;
  mp4Long150s: Buffer;
  mp4Noise4s: Buffer;
  truncatedJpeg: Buffer;
  truncatedMp4: Buffer;
  pdf: Buffer;
  text: Buffer;
  cleanup(): void;
}

export function makeMediaFiles(): MediaFiles {
  const dir = mkdtempSync(join(tmpdir(), 'herald-fixtures-'));
  const make = (name: string, args: string[]): Buffer => {
    const out = join(dir, name);
    execFileSync(ffmpeg.path, ['-v', 'error', '-y', ...args, out], { timeout: 60_000 });
    return readFileSync(out);
  };
  const jpeg1080x1350 = make('a.jpg', ['-f', 'lavfi', '-i', 'color=c=red:s=1080x1350', '-frames:v', '1']);
  const png64 = make('b.png', ['-f', 'lavfi', '-i', 'color=c=blue:s=64x64', '-frames:v', '1']);
  const mp4Portrait = make('c.mp4', ['-f', 'lavfi', '-i', 'testsrc=size=180x320:rate=10:duration=2', '-c:v', 'libx264', '-pix_fmt', 'yuv420p']);
  // Noise compresses badly: a 4 s video over the 75 KB some platforms ask of a video at least.
  const mp4Noise4s = make('f.mp4', ['-f', 'lavfi', '-i', 'nullsrc=s=320x180:d=4:r=10,geq=random(1)*255:128:128', '-c:v', 'libx264', '-pix_fmt', 'yuv420p']);
  const mp4Long150s = make('d.mp4', ['-f', 'lavfi', '-i', 'testsrc=size=64x64:rate=1:duration=150', '-c:v', 'libx264', '-pix_fmt', 'yuv420p']);
  const pdf = Buffer.from('%PDF-1.4\n1 0 obj << /Type /Catalog >> endobj\ntrailer << /Root 1 0 R >>\n%%EOF\n');
  writeFileSync(join(dir, 'e.pdf'), pdf);
  return {
    jpeg1080x1350,
    png64,
    mp4Portrait,
    mp4Long150s,
    mp4Noise4s,
    truncatedJpeg: jpeg1080x1350.subarray(0, Math.floor(jpeg1080x1350.length / 2)),
    truncatedMp4: mp4Portrait.subarray(0, Math.floor(mp4Portrait.length / 2)),
    pdf,
    text: Buffer.from('just some words, not an image\n'),
    cleanup: () => rmSync(dir, { recursive: true, force: true }),
  };
}

/** A multipart/form-data body, built by hand so tests control every byte (names, types, order). */
export function multipartBody(parts: { name: string; value: Buffer | string; filename?: string; type?: string }[]): { payload: Buffer; contentType: string } {
  const boundary = `----herald${Math.random().toString(16).slice(2)}`;
  const chunks: Buffer[] = [];
  for (const part of parts) {
    const disposition = `form-data; name="${part.name}"${part.filename === undefined ? '' : `; filename="${part.filename}"`}`;
    const type = part.type === undefined ? '' : `Content-Type: ${part.type}\r\n`;
    chunks.push(Buffer.from(`--${boundary}\r\nContent-Disposition: ${disposition}\r\n${type}\r\n`), Buffer.from(part.value), Buffer.from('\r\n'));
  }
  chunks.push(Buffer.from(`--${boundary}--\r\n`));
  return { payload: Buffer.concat(chunks), contentType: `multipart/form-data; boundary=${boundary}` };
}
