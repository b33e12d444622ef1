import type { SimReply } from '../types';

/** What a provider profile of the simulator may ask of the plain simulator. */
export interface SimProfileContext {
  requestIndex: number;
  /** True the second and later times this exact request (model and messages) arrives. */
  seenBefore: (key: unknown) => boolean;
  /** What the plain simulator answers to this body (a schema answer for judges, an analyst answer for copilots). */
  plainAnswer: (body: any) => string;
}

/**
 * A provider's documented behaviour, played back: model names starting with `sim-<name>` are answered by the profile of
 * that name (as `sim-reasoning` plays OpenAI's reasoning models). Return undefined to let the plain simulator answer.
 */
export type SimProfile = (body: any, ctx: SimProfileContext) => SimReply | undefined;

/** Chat content as text (a string or an array of parts). */
export function textOf(content: unknown): string {
  if (typeof content === 'string') return content;
  if (Array.isArray(content)) return content.map((p) => (typeof p?.text === 'string' ? p.text : '')).join('');
  return '';
}

/** Whether the request asks for a JSON answer (a judge), by response_format or by a schema in its prompt. */
export function wantsJson(body: any): boolean {
  return Boolean(body.response_format) || promptSchema(body) !== null;
}

/** The JSON Schema a prompt spells out (judgeflow's instruction puts it on a line of its own), or null. */
export function promptSchema(body: any): Record<string, unknown> | null {
  for (const m of [...(body.messages ?? [])].reverse()) {
    for (const line of textOf(m?.content).split('\n').reverse()) {
      const t = line.trim();
      if (!t.startsWith('{') || !t.includes('"properties"')) continue;
      try {
        return JSON.parse(t);
      } catch {
        /* not the schema line */
      }
    }
  }
  return null;
}

/** The plain simulator's answer for the schema the prompt states (what a model that reads the prompt would answer). */
export function answerFromPrompt(body: any, ctx: SimProfileContext): string | null {
  const schema = promptSchema(body);
  return schema
    ? ctx.plainAnswer({
        ...body,
        response_format: { type: 'json_schema', json_schema: { name: 'from_prompt', schema } },
      })
    : null;
}

/** A JSON error body with OpenAI's shape. */
export function openaiError(
  status: number,
  message: string,
  code: string | null,
  type = 'invalid_request_error',
  param: string | null = null,
): SimReply {
  return { status, body: JSON.stringify({ error: { message, type, param, code } }) };
}
