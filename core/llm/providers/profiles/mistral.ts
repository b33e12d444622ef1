import type { ProviderProfile } from '../profile';

export const profile: ProviderProfile = {
  id: 'mistral',
  label: 'Mistral La Plateforme (api.mistral.ai)',
  transport: 'openai-chat',
  hosts: [/(^|\.)api\.mistral\.ai$/],
  // eca issue #231, langchain-azure issue #82: `seed` is refused with 422 `extra_forbidden` ("Extra inputs are not
  // permitted"); Mistral API reference: the parameter is `random_seed`, the cap `max_tokens`.
  seedParam: 'random_seed',
  seedHonoured: true,
  maxTokensParam: 'max_tokens',
  responseFormat: 'json_schema',
  schemaEnforced: true,
  strict: true,
  errors: '422 {"detail": [{"type": "extra_forbidden", "loc": ["body", …], "msg"}]} or {"message": …}',
  // No batchApi: Mistral's batch jobs (docs.mistral.ai, "Batch Inference": /v1/batch/jobs) are not OpenAI's protocol.
  notes: [
    'seed sent as random_seed (extra_forbidden on seed — eca #231, langchain-azure #82)',
    'max_tokens (max_completion_tokens not accepted)',
  ],
  hooks: {
    // eca issue #231: `{"detail": [{"type": "extra_forbidden", "loc": ["body", "seed"], "msg": "Extra inputs are not
    // permitted"}]}` — pydantic's wording, so other FastAPI servers (vLLM among them) refuse a field the same way.
    refusedParameter(text, optional) {
      if (!/extra_forbidden|Extra inputs are not permitted/.test(text)) return null;
      const loc = text.match(/"loc"\s*:\s*\[\s*"body"\s*,\s*"(\w+)"/) ?? text.match(/\bbody\.(\w+)/);
      return loc && optional.includes(loc[1]) ? loc[1] : null;
    },
  },
};
