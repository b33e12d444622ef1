import { openWeightsHost, type ProviderProfile } from '../profile';

export const profile: ProviderProfile = {
  ...openWeightsHost,
  notes: [...openWeightsHost.notes],
  id: 'fireworks',
  label: 'Fireworks AI (api.fireworks.ai/inference/v1)',
  hosts: [/(^|\.)api\.fireworks\.ai$/],
  // No batchApi: Fireworks' batch inference is its own jobs API (docs.fireworks.ai, "Batch inference"), not OpenAI's /v1/batches.
};
