import { lookup as dnsLookup } from 'node:dns';
import { isIP, type LookupFunction } from 'node:net';
import ipaddr from 'ipaddr.js';
import { Agent, fetch as undiciFetch, FormData as UndiciFormData } from 'undici';

/** A URL the SSRF guard refuses: the message says why and what setting would allow it. */
export class UrlNotAllowedError extends Error {
  constructor(reason: string) {
    super(`URL not allowed: ${reason}`);
    this.name = 'UrlNotAllowedError';
  }
}

export interface GuardedFetchOptions {
  /** Also allow http: and loopback, private and link-local addresses (self-hosted servers, tests). */
  allowPrivateNetwork: boolean;
  /** Aborts each request (connect, headers and body) after this many milliseconds. */
  timeoutMs?: number;
}

const PRIVATE_HINT = 'set HERALD_ALLOW_PRIVATE_NETWORK=true for a private network';

/** The ranges HERALD_ALLOW_PRIVATE_NETWORK opens, as a person would name them. */
const PRIVATE_RANGES: Partial<Record<string, string>> = {
  loopback: 'a loopback address',
  private: 'a private address',
  linkLocal: 'a link-local address',
  uniqueLocal: 'a private (unique local) address',
  carrierGradeNat: 'a carrier-grade NAT address',
};

/** What kind of address this is when it may not be reached, or null when it may. */
function refusedKind(address: string, allowPrivateNetwork: boolean): string | null {
  // process() turns an IPv4-mapped IPv6 address (::ffff:127.0.0.1) into the IPv4 address it carries.
  const parsed = ipaddr.process(address);
  // An IPv4-compatible IPv6 address (::127.0.0.1, deprecated by RFC 4291) reads as unicast to
  // ipaddr.js, though stacks may route it to the IPv4 address it carries.
  if (parsed.kind() === 'ipv6' && isIpv4Compatible(parsed as ipaddr.IPv6)) return 'an IPv4-compatible IPv6 address (deprecated)';
  const range = parsed.range();
  if (range === 'unicast') return null;
  const privateKind = PRIVATE_RANGES[range];
  if (privateKind === undefined) return `a reserved address (${range})`;
  return allowPrivateNetwork ? null : privateKind;
}

/** In ::/96 but neither :: nor ::1, which have ranges of their own. */
function isIpv4Compatible(address: ipaddr.IPv6): boolean {
  const parts = address.parts;
  return parts.slice(0, 6).every((part) => part === 0) && (parts[6] !== 0 || (parts[7] ?? 0) > 1);
}

function addressRule(allowPrivateNetwork: boolean): string {
  return allowPrivateNetwork ? 'only public and private-network addresses are allowed' : `only public addresses are allowed (${PRIVATE_HINT})`;
}

/**
 * The checks that need no DNS: the scheme, credentials in the URL, and a literal IP address.
 * Request handlers call it to refuse a URL at once; the guarded fetch calls it on every request.
 */
export function assertUrlAllowed(url: string, allowPrivateNetwork: boolean): void {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    throw new UrlNotAllowedError('it is not a valid absolute URL');
  }
  const scheme = parsed.protocol.slice(0, -1);
  if (scheme === 'http' && !allowPrivateNetwork) {
    throw new UrlNotAllowedError(`http is refused; only https to public addresses (${PRIVATE_HINT})`);
  }
  if (scheme !== 'https' && scheme !== 'http') {
    throw new UrlNotAllowedError(`${scheme} is refused; only ${allowPrivateNetwork ? 'https and http' : 'https'} URLs are allowed`);
  }
  if (parsed.username !== '' || parsed.password !== '') {
    throw new UrlNotAllowedError('credentials in the URL (user:password@) are refused');
  }
  const host = parsed.hostname.startsWith('[') ? parsed.hostname.slice(1, -1) : parsed.hostname;
  if (isIP(host) !== 0) {
    const kind = refusedKind(host, allowPrivateNetwork);
    if (kind !== null) throw new UrlNotAllowedError(`${host} is ${kind}; ${addressRule(allowPrivateNetwork)}`);
  }
}

/**
 * Resolves like dns.lookup, but refuses the name when any of its addresses is refused: checked as
 * the socket connects, so a name that resolved to a public address a moment ago and to a private
 * one now (DNS rebinding) is still refused.
 */
function guardedLookup(allowPrivateNetwork: boolean): LookupFunction {
  return (hostname, options, callback) => {
    dnsLookup(hostname, { ...options, all: true }, (err, addresses) => {
      if (err) return callback(err, '', 0);
      for (const { address } of addresses) {
        const kind = refusedKind(address, allowPrivateNetwork);
        if (kind !== null) {
          // Neither the address nor its range is named: either would tell a tenant what internal names resolve to.
          return callback(new UrlNotAllowedError(`${hostname} is not allowed; ${addressRule(allowPrivateNetwork)}`), '', 0);
        }
      }
      const first = addresses[0];
      if (options.all) return callback(null, addresses);
      if (first === undefined) return callback(Object.assign(new Error(`${hostname} has no address`), { code: 'ENOTFOUND' }), '', 0);
      callback(null, first.address, first.family);
    });
  };
}

type UndiciInit = NonNullable<Parameters<typeof undiciFetch>[1]>;

/**
 * undici's fetch only knows its own FormData class: the global one would be sent as the text
 * "[object FormData]", so its entries are copied over.
 */
function toUndiciBody(body: RequestInit['body']): UndiciInit['body'] {
  if (!(body instanceof FormData)) return body as UndiciInit['body'];
  const copy = new UndiciFormData();
  for (const [name, value] of body) {
    if (typeof value === 'string') copy.append(name, value);
    else copy.append(name, value, value.name);
  }
  return copy;
}

/**
 * A fetch that reaches only the addresses the options allow, checked when each connection is
 * made, and never follows a redirect (a 3xx comes back to the caller as it is). A refused URL
 * rejects with UrlNotAllowedError.
 */
export function createGuardedFetch(options: GuardedFetchOptions): typeof globalThis.fetch {
  const { allowPrivateNetwork, timeoutMs } = options;
  // Literal IPs never reach the lookup (Node connects to them directly); assertUrlAllowed has checked them, and they cannot change.
  const dispatcher = new Agent({ connect: { lookup: guardedLookup(allowPrivateNetwork) } });

  return async (input, init = {}) => {
    // undici's fetch does not know the global Request class either: its parts are passed on.
    const [url, requestInit]: [string, RequestInit] =
      input instanceof Request
        ? [input.url, { method: input.method, headers: input.headers, body: input.body, signal: input.signal, ...init }]
        : [String(input), init];
    assertUrlAllowed(url, allowPrivateNetwork);
    const signals = [requestInit.signal, timeoutMs === undefined ? undefined : AbortSignal.timeout(timeoutMs)];
    const present = signals.filter((s): s is AbortSignal => s !== undefined && s !== null);
    try {
      // undici's own Response: the global one's interface, though `instanceof Response` is false.
      return await undiciFetch(url, {
        ...(requestInit as UndiciInit),
        body: toUndiciBody(requestInit.body),
        ...(requestInit.body instanceof ReadableStream ? { duplex: 'half' } : {}),
        signal: present.length > 1 ? AbortSignal.any(present) : present[0],
        redirect: 'manual',
        dispatcher,
      });
    } catch (err) {
      if (err instanceof Error && err.cause instanceof UrlNotAllowedError) throw err.cause;
      throw err;
    }
  };
}
