/**
 * The provider's own words from an error body of any shape, so a failure never reads "400 status code (no body)":
 *   {"error": {"message": …, "code": …}}           OpenAI and most compatible servers
 *   [{"error": {"code": 400, "message": …}}]       Gemini's OpenAI layer (ChatterUI issue #227)
 *   {"detail": "…"} / {"detail": [{"msg", "loc"}]} FastAPI servers, Mistral's 422 (eca issue #231)
 *   {"message": "…"} / {"message": {"detail": […]}} gateways and some proxies
 *   {"error": "…"}                                 Ollama, simple servers
 */
export function providerErrorMessage(body: string): string | null {
  const value = parsed(body);
  if (value === undefined) return body.trim() ? body.trim() : null;
  const message = messageOf(value, 0);
  return message && message.trim() ? message.trim() : null;
}

/** The machine-readable code or type an error body carries (insufficient_quota, json_validate_failed, extra_forbidden…). */
export function providerErrorCodes(body: string): string[] {
  const value = parsed(body);
  const codes: string[] = [];
  const visit = (v: unknown, depth: number): void => {
    if (depth > 5 || v === null || typeof v !== 'object') return;
    if (Array.isArray(v)) return v.forEach((x) => visit(x, depth + 1));
    const o = v as Record<string, unknown>;
    for (const key of ['code', 'type', 'status']) if (typeof o[key] === 'string') codes.push(o[key] as string);
    for (const key of ['error', 'detail', 'message', 'details']) visit(o[key], depth + 1);
  };
  visit(value, 0);
  return codes;
}

function parsed(body: string): unknown {
  try {
    return JSON.parse(body.replace(/^\uFEFF/, ''));
  } catch {
    return undefined;
  }
}

function messageOf(value: unknown, depth: number): string | null {
  if (depth > 5 || value === null || value === undefined) return null;
  if (typeof value === 'string') return value;
  if (Array.isArray(value)) {
    const parts = value.map((v) => messageOf(v, depth + 1)).filter((m): m is string => Boolean(m));
    return parts.length ? [...new Set(parts)].join('; ') : null;
  }
  if (typeof value !== 'object') return String(value);
  const o = value as Record<string, unknown>;
  // FastAPI / pydantic validation item: {"type", "loc": ["body", "seed"], "msg"}.
  if (typeof o.msg === 'string') {
    const loc = Array.isArray(o.loc) ? o.loc.filter((x) => x !== 'body').join('.') : '';
    return `${loc ? `${loc}: ` : ''}${o.msg}${typeof o.type === 'string' ? ` (${o.type})` : ''}`;
  }
  for (const key of ['error', 'message', 'detail', 'errors', 'error_message', 'description']) {
    const inner = messageOf(o[key], depth + 1);
    if (inner) return inner;
  }
  return null;
}

/** Parameters judgeflow sends only as options, so it can leave them out when an endpoint refuses them. */
const OPTIONAL_PARAMETERS = ['temperature', 'max_tokens', 'max_completion_tokens', 'seed', 'random_seed', 'top_p', 'response_format', 'presence_penalty', 'frequency_penalty'];

/**
 * The request parameter a 400/422 refuses, if that is what it says, in any of the documented wordings:
 *   "Unsupported parameter: 'max_tokens' is not supported with this model." (OpenAI reasoning models)
 *   "Unsupported value: 'temperature' does not support 0 with this model." (OpenAI reasoning models)
 *   "Invalid JSON payload received. Unknown name \"seed\": Cannot find field." (Gemini, ChatterUI issue #227)
 *   {"detail": [{"type": "extra_forbidden", "loc": ["body", "seed"], "msg": "Extra inputs are not permitted"}]} (Mistral, eca #231)
 *   "This response_format type is unavailable now" (DeepSeek, llm-exe issue #662)
 */
export function unsupportedParameter(text: string): string | null {
  const gemini = text.match(/Unknown name \\*"(\w+)\\*"[^.]*Cannot find field/);
  if (gemini && OPTIONAL_PARAMETERS.includes(gemini[1])) return gemini[1];
  if (/extra_forbidden|Extra inputs are not permitted/.test(text)) {
    const loc = text.match(/"loc"\s*:\s*\[\s*"body"\s*,\s*"(\w+)"/) ?? text.match(/\bbody\.(\w+)/);
    if (loc && OPTIONAL_PARAMETERS.includes(loc[1])) return loc[1];
  }
  if (/response_format type is unavailable|response_format.*(not supported|unsupported|unavailable)/i.test(text)) return 'response_format';
  if (!/unsupported (parameter|value)|not supported|does not support|unrecognized request argument/i.test(text)) return null;
  const names = OPTIONAL_PARAMETERS.join('|');
  const named = text.match(new RegExp(`'(${names})'`)) ?? text.match(new RegExp(`"param"\\s*:\\s*"(${names})"`)) ?? text.match(new RegExp(`\\b(${names})\\b`));
  return named ? named[1] : null;
}

/**
 * Anthropic answers an account out of credit with a 400 invalid_request_error, the type it uses for malformed requests,
 * so only the message tells it apart: "Your credit balance is too low to access the Anthropic API…" (reported in
 * anthropics/claude-code#4684 and #66314, anthropics/claude-quickstarts#229). A spend limit the organisation or
 * workspace set is a 400 too, "You have reached your specified (workspace) API usage limits…" (Anthropic API docs,
 * "Errors"); `billing_error` (the API's 402 type) is matched by its code below.
 */
const ANTHROPIC_OUT_OF_CREDIT = /credit balance is too low|reached your specified (workspace )?API usage limits/i;

/** Out of credit rather than rate limited: OpenAI's 429 insufficient_quota (error codes guide), OpenRouter's 402, Anthropic's 400 credit errors. */
export function isQuotaError(status: number, body: string): boolean {
  const codes = providerErrorCodes(body);
  if (codes.some((c) => /insufficient_quota|credit_balance_exhausted|spend_limit_exceeded|usage_limit_exceeded|billing/i.test(c))) return true;
  if (status === 402) return true;
  if (status === 400 && ANTHROPIC_OUT_OF_CREDIT.test(providerErrorMessage(body) ?? '')) return true;
  return status === 429 && /exceeded your current quota|insufficient (credits|balance|quota)|out of credits/i.test(providerErrorMessage(body) ?? '');
}
