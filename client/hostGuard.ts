import crypto from 'node:crypto';
import type { IncomingMessage } from 'node:http';

/** Addresses only this machine can reach. */
export function isLoopbackHost(host: string): boolean {
  return host === 'localhost' || host === '::1' || /^127(\.\d{1,3}){3}$/.test(host);
}

/** Listening on every interface: the Host header can name any of the machine's addresses, so only a token protects it. */
export function isWildcardHost(host: string): boolean {
  return host === '0.0.0.0' || host === '::' || host === '';
}

/**
 * Whether a request's Host header names the server as it was bound (`bound`, listening on `port`). A page of a local server
 * read through another name (DNS rebinding: evil.example resolving to 127.0.0.1) carries that name in Host; refusing it
 * stops a web page in the user's browser from reading the server. A wildcard bind accepts any Host (see isWildcardHost).
 */
export function hostAllowed(req: IncomingMessage, bound: string, port: number): boolean {
  if (isWildcardHost(bound)) return true;
  const header = (req.headers.host ?? '').toLowerCase();
  const names = isLoopbackHost(bound)
    ? ['127.0.0.1', 'localhost', '[::1]', bound.includes(':') ? `[${bound}]` : bound]
    : [bound.includes(':') ? `[${bound.toLowerCase()}]` : bound.toLowerCase()];
  return names.some((name) => header === `${name}:${port}` || (port === 80 && header === name));
}

/** Equal secrets, compared in constant time (their digests, so lengths do not leak either). */
export function sameSecret(given: string, expected: string): boolean {
  const digest = (s: string) => crypto.createHash('sha256').update(s).digest();
  return crypto.timingSafeEqual(digest(given), digest(expected));
}
