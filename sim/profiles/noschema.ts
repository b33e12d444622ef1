import { answerFromPrompt, wantsJson, type SimProfile } from './types';

/**
 * An endpoint that ignores response_format (Anthropic's OpenAI layer documents it as ignored; OpenRouter without
 * require_parameters; many local servers): prose, then the JSON in a fenced block, shaped by what the prompt says —
 * a guessed shape when the prompt does not state its schema.
 */
export const noschema: SimProfile = (body, ctx) => {
  if (!wantsJson(body)) return undefined;
  const json = answerFromPrompt(body, ctx) ?? '{"score": 7, "rationale": "solid answer"}';
  return {
    content: `Here is my assessment.\n\n\`\`\`json\n${JSON.stringify(JSON.parse(json), null, 2)}\n\`\`\`\n\nLet me know if you need more detail.`,
  };
};
