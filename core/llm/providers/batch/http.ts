/**
 * One request to a provider's batch endpoints over fetch, with the transports' conventions (core/llm/providers/chat.ts): the
 * timeout covers the whole call, body included (ProviderTimeoutError); an HTTP error status throws ProviderHttpError
 * carrying the body as received, its message the provider's own words (errorBody.ts reads every body shape).
 */
import { providerErrorMessage } from '../errorBody';
import { headersOf, ProviderHttpError } from '../httpError';
import { ProviderReplyError, ProviderTimeoutError } from '../replyError';

export async function batchRequest(
  url: string,
  init: { method: 'GET' | 'POST'; headers: Record<string, string>; body?: string | FormData },
  timeoutMs: number,
): Promise<string> {
  const timeout = AbortSignal.timeout(timeoutMs);
  try {
    const response = await fetch(url, { ...init, signal: timeout });
    const text = await response.text();
    if (!response.ok) {
      const words = providerErrorMessage(text);
      throw new ProviderHttpError(
        response.status,
        text,
        headersOf(response.headers),
        `HTTP ${response.status} from ${init.method} ${new URL(url).pathname}${words ? `: ${words}` : ''}`,
      );
    }
    return text;
  } catch (error) {
    if (timeout.aborted) throw new ProviderTimeoutError(timeoutMs);
    throw error;
  }
}

export async function batchJson(
  url: string,
  init: Parameters<typeof batchRequest>[1],
  timeoutMs: number,
): Promise<any> {
  const text = await batchRequest(url, init, timeoutMs);
  try {
    return JSON.parse(text.replace(/^\uFEFF/, ''));
  } catch {
    throw new ProviderReplyError(
      `the reply of ${init.method} ${new URL(url).pathname} is not JSON: ${text.replace(/\s+/g, ' ').slice(0, EXCERPT_CHARS)}`,
      text.slice(0, RAW_CHARS),
    );
  }
}

/** At most this much of a reply is kept in an error (and so in a log): never a whole batch file. */
export const EXCERPT_CHARS = 200;
const RAW_CHARS = 4_000;

/** A line of a results file that is not JSON: where it is, its custom_id when one can be read from it, a short excerpt. */
export interface MalformedLine {
  line: number;
  customId: string | null;
  error: string;
}

/**
 * JSONL as objects. A line that is not JSON is that line's failure (`malformed`, its custom_id read from the text when
 * it can be: the line is then asked live like an expired one), not the whole file's; a file of which no line is JSON
 * (an error page, a download cut off in its first line) is a ProviderReplyError, so the download is asked again.
 * Errors carry a short excerpt, never the file.
 */
export function jsonLines(text: string, what: string): { lines: any[]; malformed: MalformedLine[] } {
  const lines: any[] = [];
  const malformed: MalformedLine[] = [];
  for (const [i, line] of text.split('\n').entries()) {
    if (line.trim() === '') continue;
    try {
      lines.push(JSON.parse(line));
    } catch {
      const customId = line.match(/"custom_id"\s*:\s*"([^"\\]{1,64})"/)?.[1] ?? null;
      malformed.push({
        line: i + 1,
        customId,
        error: `${what}: line ${i + 1} is not JSON: ${line.slice(0, EXCERPT_CHARS)}${line.length > EXCERPT_CHARS ? '…' : ''}`,
      });
    }
  }
  if (!lines.length && malformed.length)
    throw new ProviderReplyError(
      `${malformed[0].error} (no line of ${malformed.length} is JSON)`,
      text.slice(0, RAW_CHARS),
    );
  return { lines, malformed };
}

/** The malformed lines whose custom_id could be read, as errored results (the rest are unreported, hence expired). */
export function malformedResults(malformed: MalformedLine[]) {
  return malformed
    .filter((m): m is MalformedLine & { customId: string } => m.customId !== null)
    .map((m) => ({ customId: m.customId, ok: false as const, kind: 'errored' as const, error: m.error }));
}

/** The lines the provider never reported, as `kind` (expired, or canceled for a cancelled batch). */
export function unreported<R extends { customId: string }>(
  reported: R[],
  expected: string[] | undefined,
  kind: 'expired' | 'canceled',
  why: string,
) {
  const seen = new Set(reported.map((r) => r.customId));
  return (expected ?? [])
    .filter((id) => !seen.has(id))
    .map((customId) => ({ customId, ok: false as const, kind, error: why }));
}
