import type { FastifyRequest } from 'fastify';
import type {} from '@fastify/multipart';
import type { ErrorDetail } from '../../domain/api-types.js';
import { DomainError, invalidRequest } from '../../domain/errors.js';
import { isStorableText, unstorableTextDetail } from '../../domain/text.js';
import type { MediaStorage, StagedFile } from '../../domain/ports/media-storage.js';

export interface ReceivedUpload {
  staged: StagedFile;
  altText: string | null;
}

const ALT_TEXT_MAX = 1000;

/**
 * Reads the `multipart/form-data` of an upload as it arrives: the `file` part is streamed into
 * staging, `altText` kept, anything else refused. Returns only when the form is valid; otherwise
 * throws with nothing left staged. Checks the same rules the spec's MediaUploadInput states.
 */
export async function receiveUpload(req: FastifyRequest, storage: MediaStorage, maxBytes: number): Promise<ReceivedUpload> {
  let staged: StagedFile | undefined;
  let altText: string | null = null;
  const problems: ErrorDetail[] = [];
  try {
    const parts = req.parts({ limits: { fileSize: maxBytes, files: 1, fields: 5, fieldSize: ALT_TEXT_MAX * 4 + 1 } });
    for await (const part of parts) {
      if (part.type === 'file' && part.fieldname === 'file') {
        staged = await storage.stage(part.file);
      } else if (part.type === 'field' && part.fieldname === 'altText') {
        altText = String(part.value);
        const length = [...altText].length;
        if (length > ALT_TEXT_MAX || part.valueTruncated) {
          problems.push({
            code: 'too_big',
            expected: `<=${ALT_TEXT_MAX}`,
            received: String(length),
            path: ['altText'],
            message: `must NOT have more than ${ALT_TEXT_MAX} characters`,
          });
        }
        if (!isStorableText(altText)) problems.push(unstorableTextDetail(altText, ['altText']));
      } else {
        if (part.type === 'file') part.file.resume();
        problems.push({
          code: 'unrecognized_keys',
          expected: 'never',
          received: part.fieldname,
          path: [part.fieldname],
          message: `Unrecognized key: '${part.fieldname}'`,
        });
      }
    }
  } catch (err) {
    await staged?.discard();
    throw translateMultipartError(err, maxBytes);
  }
  if (!staged) problems.unshift({ code: 'invalid_type', expected: 'file', received: 'undefined', path: ['file'], message: 'Required' });
  if (problems.length > 0 || !staged) {
    await staged?.discard();
    throw invalidRequest(problems);
  }
  return { staged, altText };
}

function translateMultipartError(err: unknown, maxBytes: number): unknown {
  switch ((err as { code?: unknown }).code) {
    case 'FST_REQ_FILE_TOO_LARGE':
      return new DomainError('too_large', `File too large: the limit is ${maxBytes} bytes`);
    case 'FST_FILES_LIMIT':
      return invalidRequest([{ code: 'too_big', expected: '1 file', received: 'more than 1 file', path: ['file'], message: 'Send exactly one file' }]);
    case 'FST_FIELDS_LIMIT':
    case 'FST_PARTS_LIMIT':
      return invalidRequest([{ code: 'too_big', expected: 'file and altText', received: 'too many parts', path: [], message: 'Too many form parts' }]);
    default:
      // The form parser's own refusals (a body cut short, no boundary) carry no code, only these words.
      if (err instanceof Error && MALFORMED_FORM.test(err.message)) {
        return invalidRequest([
          { code: 'custom', expected: 'multipart/form-data', received: 'malformed', path: [], message: 'Malformed multipart/form-data body' },
        ]);
      }
      return err;
  }
}

const MALFORMED_FORM = /unexpected end of multipart data|boundary not found|malformed part header/i;
