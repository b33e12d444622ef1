import type { Command } from '../args';
import { PROFILES, PROVIDER_IDS, type ProviderProfile } from '../../core/llm/providers';

/** A host pattern as a reader would write it: `(^|\.)api\.openai\.com$` → `api.openai.com` (and its subdomains). */
const hostPattern = (pattern: RegExp): string =>
  pattern.source
    .replace(/\(\^\|\\\.\)/g, '')
    .replace(/[\^$]/g, '')
    .replace(/\\/g, '');

/** One profile in words: what a request to it carries and which quirks judgeflow handles. */
export function describeProfile(p: ProviderProfile): string[] {
  const format =
    p.responseFormat === 'json_schema'
      ? `json_schema${p.strict ? ' (strict)' : ' (strict: false)'}`
      : p.responseFormat === 'json_object'
        ? 'json_object (JSON mode)'
        : 'none';
  return [
    `${p.id} — ${p.label}`,
    `  transport: ${p.transport}${p.hosts.length ? `; recognised hosts: ${p.hosts.map(hostPattern).join(', ')}` : '; never inferred: name it with provider:'}`,
    p.transport === 'anthropic-messages'
      ? `  sends: no seed; max_tokens (required); the system prompt apart; a JSON answer through a forced tool call`
      : `  sends: seed as ${p.seedParam ?? '(not sent)'}; token cap as ${p.maxTokensParam}${p.reasoningModel ? ' (max_completion_tokens and no temperature for o1/o3/o4/gpt-5)' : ''}; response_format ${format}${p.extraBody ? `; ${JSON.stringify(p.extraBody)}` : ''}`,
    `  schema in the prompt: ${p.responseFormat !== 'json_schema' || !p.schemaEnforced ? 'yes (enforcement not known)' : 'no (enforced)'}; batch API: ${p.batchApi ?? 'none'}`,
    `  errors: ${p.errors}`,
    ...p.notes.map((n) => `  - ${n}`),
  ];
}

export const providersCommand: Command = {
  name: 'providers',
  summary: 'list the provider profiles (provider: on judges and openai copilots) and what each request to them carries',
  usage: 'judgeflow providers [--json]',
  options: { json: { type: 'boolean' } },
  async run({ values }) {
    if (values.json) {
      console.log(
        JSON.stringify(
          PROVIDER_IDS.map((id) => ({
            ...PROFILES[id],
            hosts: PROFILES[id].hosts.map((h) => h.source),
            reasoningModel: Boolean(PROFILES[id].reasoningModel),
          })),
          null,
          2,
        ),
      );
      return 0;
    }
    console.log(
      [
        ...PROVIDER_IDS.flatMap((id) => [...describeProfile(PROFILES[id]), '']),
        'Set `provider:` on a judge (or panel member) or an openai copilot; without it the base URL host decides, else openai-compatible.',
      ].join('\n'),
    );
    return 0;
  },
};
