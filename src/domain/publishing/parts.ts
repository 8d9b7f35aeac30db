/** What one target publishes, part by part: the post (or each thread part), then the first comment as a reply. */
export function partTexts(target: { caption: string | null; threadParts: readonly string[] | null; firstComment: string | null }): string[] {
  const body = target.threadParts !== null && target.threadParts.length > 0 ? [...target.threadParts] : [target.caption ?? ''];
  return target.firstComment === null ? body : [...body, target.firstComment];
}
