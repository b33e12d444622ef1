import { openWeightsHost, type ProviderProfile } from '../profile';

export const profile: ProviderProfile = {
  ...openWeightsHost,
  notes: [...openWeightsHost.notes],
  id: 'together',
  label: 'Together AI (api.together.xyz/v1)',
  hosts: [/(^|\.)api\.together\.(xyz|ai)$/],
  // No batchApi: Together's Batch API is its own shape (docs.together.ai/reference/batch-create: files with purpose
  // "batch-api", the created batch wrapped in {"job": …}, statuses in capitals like IN_PROGRESS), not OpenAI's.
};
