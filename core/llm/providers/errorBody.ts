/**
 * The provider's own words from an error body of any shape, so a failure never reads "400 status code (no body)".
 * What the words mean (a refused parameter, out of quota) is each provider's to say: the hooks of its profile
 * (profiles/<name>.ts), asked through the registry (index.ts). Shapes read here:
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
