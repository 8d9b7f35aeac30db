/** Herald's own words only: nothing from the request reaches a consent page. */
export const page = (title: string, text: string) =>
  `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>${title}</title></head><body><h1>${title}</h1><p>${text}</p></body></html>`;

/** The cookie that binds a browser to the connection whose consent link it opened; one per connection, so several can be under way. */
export const CONSENT_COOKIE_PREFIX = 'herald_consent_';

/** The values of this request's consent cookies (RFC 6265 §4.2: `name=value` pairs separated by `; `). */
export function consentCookiesOf(header: string | undefined): string[] {
  if (header === undefined) return [];
  const values: string[] = [];
  for (const pair of header.split(';')) {
    const at = pair.indexOf('=');
    if (at !== -1 && pair.slice(0, at).trim().startsWith(CONSENT_COOKIE_PREFIX)) values.push(pair.slice(at + 1).trim());
  }
  return values;
}
