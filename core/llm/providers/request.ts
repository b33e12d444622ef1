import type { ProviderProfile } from './profile';

type Message = { role: string; content: string };

/** What a judge or copilot config says about the request, before the profile decides names and omissions. */
export interface RequestSettings {
  model: string;
  /** null or undefined: not sent. */
  temperature?: number | null;
  maxTokens?: number;
  /** The config's explicit choice; otherwise the profile's (max_completion_tokens for reasoning models). */
  maxTokensParam?: 'max_tokens' | 'max_completion_tokens';
  /** null or undefined: not sent (`sendSeed: false`, or a re-ask's seed). */
  seed?: number | null;
  /** The config's explicit response format; otherwise the profile's. */
  responseFormat?: 'json_schema' | 'json_object' | 'none';
  /** Provider fields passed through as they are (tools, web_search_options, reasoning_effort, provider routing…). */
  extraBody?: Record<string, unknown>;
}

export interface JsonWanted {
  name: string;
  schema: Record<string, unknown>;
}

/**
 * Parameters an endpoint refused during this run (core/llm/providers/session.ts): left out from then on. `response_format`
 * refused once falls back from json_schema to JSON mode, refused again to none.
 */
export type Dropped = ReadonlySet<string>;

/** The response format actually sent, after the profile, the config and any refusals. */
export function effectiveFormat(
  profile: ProviderProfile,
  settings: RequestSettings,
  dropped: Dropped,
): 'json_schema' | 'json_object' | 'none' {
  let format = settings.responseFormat ?? profile.responseFormat;
  if (format === 'json_schema' && dropped.has('response_format')) format = 'json_object';
  if (format === 'json_object' && dropped.has('response_format:json_object')) format = 'none';
  return format;
}

/** Whether the answer's JSON Schema must be spelled out in the prompt: the format sent does not enforce it, or may not. */
export function schemaInPrompt(profile: ProviderProfile, settings: RequestSettings, dropped: Dropped): boolean {
  return effectiveFormat(profile, settings, dropped) !== 'json_schema' || !profile.schemaEnforced;
}

/** The instruction added to the prompt when the schema is not enforced (the LATTICE prompt never states its JSON shape). */
export function schemaInstruction(json: JsonWanted): string {
  return [
    'Answer with a single JSON object and nothing else (no prose, no Markdown code fence).',
    `It must match this JSON Schema ("${json.name}"):`,
    JSON.stringify(json.schema),
  ].join('\n');
}

/** Add the schema instruction to the system message, or to the last user message when there is no system message. */
export function withSchemaInstruction<M extends Message>(messages: M[], json: JsonWanted): M[] {
  const instruction = schemaInstruction(json);
  const at = messages.findIndex((m) => m.role === 'system');
  const index = at >= 0 ? at : messages.map((m) => m.role).lastIndexOf('user');
  if (index < 0) return [...messages, { role: 'user', content: instruction } as M];
  return messages.map((m, i) => (i === index ? { ...m, content: `${m.content}\n\n${instruction}` } : m));
}

/** The token cap's name for this model, after the config, the profile and any refusal. */
export function maxTokensName(
  profile: ProviderProfile,
  settings: RequestSettings,
  dropped: Dropped,
): 'max_tokens' | 'max_completion_tokens' {
  const reasoning = profile.reasoningModel?.(settings.model) ?? false;
  const wanted = settings.maxTokensParam ?? (reasoning ? 'max_completion_tokens' : profile.maxTokensParam);
  if (!dropped.has(wanted)) return wanted;
  return wanted === 'max_tokens' ? 'max_completion_tokens' : 'max_tokens';
}

/** The Chat Completions body for this profile: parameter names, omissions and response format all decided here. */
export function chatRequestBody(
  profile: ProviderProfile,
  settings: RequestSettings,
  messages: Message[],
  json: JsonWanted | null,
  dropped: Dropped = new Set(),
): Record<string, unknown> {
  const reasoning = profile.reasoningModel?.(settings.model) ?? false;
  const body: Record<string, unknown> = { model: settings.model, messages };
  // Reasoning models accept only the default temperature (OpenAI API reference): anything else is left out.
  const temperature = settings.temperature;
  if (
    temperature !== null &&
    temperature !== undefined &&
    !dropped.has('temperature') &&
    !(reasoning && temperature !== 1)
  )
    body.temperature = temperature;
  if (settings.maxTokens) {
    const name = maxTokensName(profile, settings, dropped);
    if (!dropped.has(name)) body[name] = settings.maxTokens;
  }
  if (settings.seed !== null && settings.seed !== undefined && profile.seedParam && !dropped.has(profile.seedParam))
    body[profile.seedParam] = settings.seed;
  if (json) {
    const format = effectiveFormat(profile, settings, dropped);
    if (format === 'json_schema')
      body.response_format = {
        type: 'json_schema',
        json_schema: { name: json.name, strict: profile.strict, schema: json.schema },
      };
    else if (format === 'json_object') body.response_format = { type: 'json_object' };
    if (schemaInPrompt(profile, settings, dropped)) body.messages = withSchemaInstruction(messages, json);
  }
  return { ...body, ...profile.extraBody, ...settings.extraBody };
}

/** What to remember when an endpoint refuses `parameter`: the name in the Dropped set (response_format steps down). */
export function dropKey(parameter: string, body: Record<string, unknown>): string | null {
  if (parameter === 'response_format') {
    const type = (body.response_format as { type?: string } | undefined)?.type;
    if (type === 'json_schema') return 'response_format';
    if (type === 'json_object') return 'response_format:json_object';
    return null;
  }
  return parameter in body ? parameter : null;
}
