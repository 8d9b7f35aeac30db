/** Resolves once `check` holds, looking every `everyMs`; fails naming `what` after `timeoutMs`. */
export async function until(what: string, check: () => boolean | Promise<boolean>, { timeoutMs = 30_000, everyMs = 100 } = {}): Promise<void> {
  for (const end = Date.now() + timeoutMs; !(await check());) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, everyMs));
  }
}
