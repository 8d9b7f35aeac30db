/**
 * Every match of a global pattern in `text`, as `text.matchAll(pattern)` gives them, found with the
 * pattern itself. matchAll first copies the pattern (a new RegExp on each call), and for the link
 * patterns, which hold some 1,500 TLDs, the copy cost ~25 µs a call, most of a caption's check;
 * exec on the shared pattern costs a fraction of a microsecond. The matches are all collected before
 * returning, so a caller may run the same pattern again while it goes through them.
 */
export function matchesOf(pattern: RegExp, text: string): RegExpExecArray[] {
  if (!pattern.global) throw new Error(`matchesOf needs a global pattern: /${pattern.source}/${pattern.flags}`);
  const matches: RegExpExecArray[] = [];
  pattern.lastIndex = 0;
  for (let match = pattern.exec(text); match !== null; match = pattern.exec(text)) {
    matches.push(match);
    // An empty match does not move lastIndex: step over one character, as matchAll does.
    if (match[0] === '') pattern.lastIndex = nextIndex(text, pattern.lastIndex, /[uv]/.test(pattern.flags));
  }
  return matches;
}

function nextIndex(text: string, index: number, byCodePoint: boolean): number {
  if (!byCodePoint) return index + 1;
  const codePoint = text.codePointAt(index);
  return index + (codePoint !== undefined && codePoint > 0xffff ? 2 : 1);
}
