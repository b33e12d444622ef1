/**
 * An HTTP error answered by an LLM provider, as received: the status, the body text (whatever its shape) and the
 * headers (lower-cased names). Thrown by judgeflow's own transports (OpenAI-compatible chat, Anthropic Messages) so the
 * one error classifier (activities/adapters/errors.ts `toAdapterError`) can read the provider's own words from any body
 * shape and honour Retry-After, exactly as for the OpenAI SDK's APIError.
 */
export class ProviderHttpError extends Error {
  readonly status: number;
  readonly body: string;
  readonly headers: Record<string, string>;
  constructor(status: number, body: string, headers: Record<string, string>, message?: string) {
    super(message ?? `HTTP ${status}${body ? `: ${body.replace(/\s+/g, ' ').trim().slice(0, 300)}` : ''}`);
    this.name = 'ProviderHttpError';
    this.status = status;
    this.body = body;
    this.headers = headers;
  }
}

/** A fetch Response's headers as a plain object with lower-cased names. */
export function headersOf(headers: {
  forEach(fn: (value: string, name: string) => void): void;
}): Record<string, string> {
  const out: Record<string, string> = {};
  headers.forEach((value, name) => (out[name.toLowerCase()] = value));
  return out;
}
