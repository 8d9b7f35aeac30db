import { InvalidArgumentError } from 'commander';

/** Value parsers for command-line flags; each failure is one line naming what was expected. */

export function nonNegativeInteger(value: string): number {
  const n = Number(value);
  if (!/^\d+$/.test(value) || !Number.isSafeInteger(n)) throw new InvalidArgumentError('Expected a non-negative integer.');
  return n;
}

export function positiveInteger(value: string): number {
  const n = nonNegativeInteger(value);
  if (n === 0) throw new InvalidArgumentError('Expected a positive integer.');
  return n;
}

/** An ISO 8601 timestamp with a zone, later than now (an already expired key is of no use). */
export function futureTimestamp(value: string): Date {
  const at = new Date(value);
  if (!/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2}(\.\d+)?)?(Z|[+-]\d{2}:?\d{2})$/i.test(value) || Number.isNaN(at.getTime())) {
    throw new InvalidArgumentError('Expected an ISO 8601 timestamp with a zone, e.g. 2030-01-01T00:00:00Z.');
  }
  if (at.getTime() <= Date.now()) throw new InvalidArgumentError('Expected a time in the future.');
  return at;
}

export function mediaKind(value: string): 'image' | 'video' {
  if (value !== 'image' && value !== 'video') throw new InvalidArgumentError('Expected image or video.');
  return value;
}

/** A secret given as '-' is read from stdin, so it need not appear in the process list or the shell's history. */
export async function readSecretArgument(value: string): Promise<string> {
  if (value !== '-') return value;
  const chunks: Buffer[] = [];
  for await (const chunk of process.stdin) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString('utf8').trim();
}
