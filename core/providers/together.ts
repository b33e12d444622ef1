import { openWeightsHost, type ProviderProfile } from './profile';

export const together: ProviderProfile = {
  ...openWeightsHost,
  notes: [...openWeightsHost.notes],
  id: 'together',
  label: 'Together AI (api.together.xyz/v1)',
  hosts: [/(^|\.)api\.together\.(xyz|ai)$/],
};
