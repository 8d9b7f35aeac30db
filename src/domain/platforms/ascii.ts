const NON_ASCII = /[\u0080-\uffff]/;

/**
 * Whether the text is all ASCII, where counting needs no segmenter: no ASCII character extends or
 * joins another (UAX #29), so each is its own grapheme but for CR LF, one grapheme of two; none is an
 * emoji on its own (RGI_Emoji, Extended_Pictographic); NFC leaves it as it is; and an ASCII domain
 * label is its own punycode. Most captions are.
 */
export function isAscii(text: string): boolean {
  return !NON_ASCII.test(text);
}
