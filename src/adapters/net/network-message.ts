/** Names the host and the cause of a request that got no answer, never the full URL or a header. */
export function networkMessage(thrown: unknown, host: string): string {
  if (thrown instanceof Error && (thrown.name === 'TimeoutError' || thrown.name === 'AbortError')) return `${host} did not answer in time`;
  const cause = thrown instanceof Error ? (thrown.cause as { code?: unknown } | undefined) : undefined;
  const code = typeof cause?.code === 'string' ? ` (${cause.code})` : '';
  return `${host} did not answer${code}`;
}
