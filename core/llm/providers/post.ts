import http from 'node:http';
import https from 'node:https';
import zlib from 'node:zlib';

/**
 * One POST over Node's http/https modules, answered as fetch answers it: the status, the headers (lower-case names,
 * repeated ones joined by ", "), and the body decoded as UTF-8 (a leading BOM dropped, gzip/deflate/br undone). Every
 * judge and copilot call (chat completions and Anthropic Messages) uses it instead of fetch: fetch (undici) cost about
 * 1.2 ms of CPU a call here against 0.3 ms (a 12 KB request, 400 ms latency, 12 at a time: docs/bench.md). Failures
 * look like fetch's, so what reads them keeps working: a network fault before the answer is a TypeError "fetch failed"
 * whose `cause` is the socket error (activities/adapters/errors.ts reads its code), one while the body streams is a
 * TypeError "terminated", and an aborted `signal` rejects with its reason; a 307/308 is followed (to another origin
 * without the key). Connections are kept alive (fetch pools them too); idle ones do not hold the process open.
 */
export interface PostReply {
  status: number;
  ok: boolean;
  headers: Record<string, string>;
  text: string;
}

// An idle connection is closed after 4 s, as undici's (fetch's) are, before a server's keep-alive timeout (Node's: 5 s)
// can close it under a request just sent. (The timeout applies to idle sockets only: a request in flight ignores it.)
const agents = {
  'http:': new http.Agent({ keepAlive: true, timeout: 4_000 }),
  'https:': new https.Agent({ keepAlive: true, timeout: 4_000 }),
};

/** fetch follows a 307/308 with the same POST; so does this, as many times as fetch would (20). */
export async function postText(
  url: string,
  headers: Record<string, string>,
  body: string,
  signal: AbortSignal,
): Promise<PostReply> {
  for (let redirects = 0; ; redirects++) {
    const reply = await postOnce(url, headers, body, signal);
    const location = reply.headers.location;
    if ((reply.status !== 307 && reply.status !== 308) || !location) return reply;
    if (redirects >= 20) throw new TypeError('fetch failed', { cause: new Error('redirect count exceeded') });
    const next = new URL(location, url);
    if (next.origin !== new URL(url).origin) headers = withoutCredentials(headers);
    url = next.toString();
  }
}

/**
 * Headers that carry an endpoint's key. The Fetch Standard drops Authorization when a redirect leaves the origin
 * (whatwg/fetch#1544, "HTTP-redirect fetch"; curl's CVE-2018-1000007 is the same leak), and undici also drops cookies;
 * provider keys also travel as x-api-key (Anthropic), api-key (Azure) and x-goog-api-key, so those go too: a key is
 * only ever sent to the host it was configured for.
 */
const CREDENTIAL_HEADERS = new Set([
  'authorization',
  'proxy-authorization',
  'cookie',
  'x-api-key',
  'api-key',
  'x-goog-api-key',
]);

function withoutCredentials(headers: Record<string, string>): Record<string, string> {
  return Object.fromEntries(Object.entries(headers).filter(([name]) => !CREDENTIAL_HEADERS.has(name.toLowerCase())));
}

function postOnce(url: string, headers: Record<string, string>, body: string, signal: AbortSignal): Promise<PostReply> {
  return new Promise<PostReply>((resolve, reject) => {
    if (signal.aborted) return reject(signal.reason);
    let target: URL;
    try {
      target = new URL(url);
    } catch (error) {
      return reject(new TypeError(`Failed to parse URL from ${url}`, { cause: error }));
    }
    const protocol = target.protocol as keyof typeof agents;
    if (!(protocol in agents)) return reject(new TypeError('fetch failed', { cause: new Error('unknown scheme') }));
    const payload = Buffer.from(body, 'utf8');
    let settled = false;
    const finish = (fn: () => void) => {
      if (settled) return;
      settled = true;
      signal.removeEventListener('abort', onAbort);
      fn();
    };
    const request = (protocol === 'https:' ? https : http).request(target, {
      method: 'POST',
      agent: agents[protocol],
      headers: { 'accept-encoding': 'gzip, deflate, br', ...headers, 'content-length': String(payload.length) },
    });
    const onAbort = () => {
      finish(() => reject(signal.reason));
      request.destroy();
    };
    signal.addEventListener('abort', onAbort, { once: true });
    request.on('error', (error) => finish(() => reject(new TypeError('fetch failed', { cause: error }))));
    request.on('response', (response) => {
      const chunks: Buffer[] = [];
      const encoding = String(response.headers['content-encoding'] ?? '')
        .trim()
        .toLowerCase();
      const decoder =
        encoding === 'gzip' || encoding === 'x-gzip'
          ? zlib.createGunzip()
          : encoding === 'deflate'
            ? zlib.createInflate()
            : encoding === 'br'
              ? zlib.createBrotliDecompress()
              : null;
      const stream = decoder ? response.pipe(decoder) : response;
      const failed = (error: Error) => finish(() => reject(new TypeError('terminated', { cause: error })));
      response.on('error', failed);
      response.on('aborted', () => failed(new Error('the connection closed before the body ended')));
      decoder?.on('error', failed);
      stream.on('data', (chunk: Buffer) => chunks.push(chunk));
      stream.on('end', () =>
        finish(() => {
          const out: Record<string, string> = {};
          for (const [name, value] of Object.entries(response.headers))
            if (value !== undefined) out[name.toLowerCase()] = Array.isArray(value) ? value.join(', ') : value;
          const status = response.statusCode ?? 0;
          resolve({
            status,
            ok: status >= 200 && status < 300,
            headers: out,
            text: new TextDecoder('utf-8').decode(Buffer.concat(chunks)),
          });
        }),
      );
    });
    request.end(payload);
  });
}
