import type { ErrorDetail } from '../../src/domain/api-types.js';

/** The `details` item for text that cannot be stored, as a client sees it (spelled out, not taken from the code under test). */
export function unstorableTextDetail(received: string, path: ErrorDetail['path']): ErrorDetail {
  return {
    code: 'invalid_string',
    expected: 'text without NUL or unpaired surrogates',
    received,
    path,
    message: 'must not contain U+0000 (NUL) or an unpaired UTF-16 surrogate',
  };
}
