import { answerFromPrompt, openaiError, type SimProfile } from './types';

/**
 * DeepSeek: json_schema is refused ("This response_format type is unavailable now", llm-exe issue #662); JSON mode
 * answers whatever the prompt describes — nothing schema-shaped when the prompt does not state the schema.
 */
export const deepseek: SimProfile = (body, ctx) => {
  const type = body.response_format?.type;
  if (type === 'json_schema')
    return openaiError(400, 'This response_format type is unavailable now', 'invalid_request_error');
  if (type === 'json_object') return { content: answerFromPrompt(body, ctx) ?? '{"verdict": "good answer"}' };
  return undefined;
};
