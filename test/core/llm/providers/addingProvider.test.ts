import fs from 'node:fs';
import path from 'node:path';
import { z } from 'zod';
import { CHECKOUT_ENTRIES, copyCheckout, launchCopy } from '../../../support/checkoutCopy';
import { REPO, tempDir } from '../../../support/harness';

/**
 * Issue 31's check: adding a provider to a copy of the checkout touches one source file under core/ (its profile in
 * core/llm/providers/profiles/) plus its simulator profile — nothing else. The copy gets a made-up provider "acme"
 * whose one quirk is a hook (it refuses a field in words no other profile reads), then its CLI lists it, from the
 * sources and compiled, and a judge call through the copy's client reaches the copy's simulator, learns the refusal
 * through the hook and is answered.
 */
const build = require('../../../../scripts/build.js') as {
  build(root: string, log?: (line: string) => void): Promise<boolean>;
};

const copy = tempDir('jf-add-provider-');

/** The provider's profile: data, and a hook for the one wording only Acme uses. */
const ACME_PROFILE = `import type { ProviderProfile } from '../profile';

export const profile: ProviderProfile = {
  id: 'acme',
  label: 'Acme Inference (api.acme.test)',
  transport: 'openai-chat',
  hosts: [/(^|\\.)api\\.acme\\.test$/],
  seedParam: 'random_seed',
  seedHonoured: true,
  maxTokensParam: 'max_completion_tokens',
  responseFormat: 'json_schema',
  schemaEnforced: true,
  strict: true,
  errors: '{"error": {"message", "code"}}',
  extraBody: { acme_trace: false },
  notes: ['refuses a field as "field <name> is not offered by Acme"'],
  hooks: {
    refusedParameter(text, optional) {
      const named = text.match(/field (\\w+) is not offered by Acme/);
      return named && optional.includes(named[1]) ? named[1] : null;
    },
  },
};
`;

/** Its behaviour in the simulator: model sim-acme refuses random_seed in Acme's words. */
const ACME_SIM = `import { openaiError, type SimProfile } from './types';

export const acme: SimProfile = (body) => (body.random_seed === undefined ? undefined : openaiError(400, 'field random_seed is not offered by Acme', 'acme_field'));
`;

const launch = (args: string[], env: NodeJS.ProcessEnv = {}) => launchCopy(copy, args, env);

/** Every file under the copied folders, relative, with its content. */
function files(root: string): Map<string, string> {
  const out = new Map<string, string>();
  const walk = (rel: string): void => {
    const full = path.join(root, rel);
    if (fs.statSync(full).isDirectory()) for (const entry of fs.readdirSync(full)) walk(path.join(rel, entry));
    else out.set(rel, fs.readFileSync(full, 'utf8'));
  };
  for (const entry of CHECKOUT_ENTRIES) if (fs.existsSync(path.join(root, entry))) walk(entry);
  return out;
}

beforeAll(() => {
  copyCheckout(copy);
  fs.writeFileSync(path.join(copy, 'core/llm/providers/profiles/acme.ts'), ACME_PROFILE);
  fs.writeFileSync(path.join(copy, 'sim/profiles/acme.ts'), ACME_SIM);
  const index = path.join(copy, 'sim/profiles/index.ts');
  const registry = fs.readFileSync(index, 'utf8');
  expect(registry).toContain('export const SIM_PROFILES: Record<string, SimProfile> = {\n');
  fs.writeFileSync(
    index,
    `import { acme } from './acme';\n${registry.replace('export const SIM_PROFILES: Record<string, SimProfile> = {\n', '$&  acme,\n')}`,
  );
});

afterAll(() => fs.rmSync(copy, { recursive: true, force: true }));

test('the copy differs from the checkout by the profile file under core/ and the simulator profile only', () => {
  const before = files(REPO);
  const after = files(copy);
  const changed = [...after].filter(([rel, text]) => before.get(rel) !== text).map(([rel]) => rel);
  expect(changed.sort()).toEqual([
    'core/llm/providers/profiles/acme.ts',
    'sim/profiles/acme.ts',
    'sim/profiles/index.ts',
  ]);
  expect([...before.keys()].filter((rel) => !after.has(rel))).toEqual([]);
});

test('judgeflow providers in the copy lists the new profile, from the sources and compiled', async () => {
  const dev = await launch(['providers', '--json'], { JUDGEFLOW_DEV: '1' });
  expect(dev.code).toBe(0);
  const listed = JSON.parse(dev.stdout) as Array<Record<string, unknown>>;
  expect(listed.find((p) => p.id === 'acme')).toMatchObject({
    label: 'Acme Inference (api.acme.test)',
    seedParam: 'random_seed',
    hosts: ['(^|\\.)api\\.acme\\.test$'],
  });
  // The fallback stays last; the checkout's own profiles are all still there.
  expect(listed.at(-1)?.id).toBe('openai-compatible');
  const { PROVIDER_IDS } = require('../../../../core/llm/providers') as typeof import('../../../../core/llm/providers');
  expect(listed.map((p) => p.id).sort()).toEqual([...PROVIDER_IDS, 'acme'].sort());

  expect(await build.build(copy, () => undefined)).toBe(true);
  const compiled = await launch(['providers']);
  expect(compiled).toMatchObject({ code: 0, stderr: '' });
  expect(compiled.stdout).toContain('acme — Acme Inference (api.acme.test)');
  expect(compiled.stdout).toMatch(
    /acme — [^\n]*\n[^\n]*recognised hosts: api\.acme\.test[^\n]*\n\s+sends: seed as random_seed; token cap as max_completion_tokens/,
  );
}, 240_000);

test('a judge call in the copy names the provider, reads its refusal through the hook, and is answered by the simulator', async () => {
  const providers = require(path.join(copy, 'core/llm/providers')) as typeof import('../../../../core/llm/providers');
  const client = require(path.join(copy, 'core/llm/client')) as typeof import('../../../../core/llm/client');
  const { startSimServer } = require(path.join(copy, 'sim/server')) as typeof import('../../../../sim/server');
  expect(providers.inferProvider('https://api.acme.test/v1')).toBe('acme');
  const sim = await startSimServer();
  try {
    const calls: Array<{ ok: boolean; errorKind: string | null }> = [];
    const answer = await client.askJson({
      settings: {
        baseURL: sim.url,
        provider: 'acme',
        model: 'sim-acme',
        temperature: 0,
        timeoutMs: 10_000,
        seed: 7,
        maxTokens: 300,
      },
      messages: [
        { role: 'system', content: 'You are a judge.' },
        { role: 'user', content: 'Grade this answer about ETH staking from 1 to 10.' },
      ],
      spec: {
        name: 'grade',
        jsonSchema: {
          type: 'object',
          properties: { score: { type: 'integer' } },
          required: ['score'],
          additionalProperties: false,
        },
        zodSchema: z.object({ score: z.number().int() }),
      },
      maxInvalidAnswers: 1,
      retryIn: 'fresh',
      env: {},
      onCall: (usage) => void calls.push({ ok: usage.ok, errorKind: usage.errorKind }),
    });
    expect(answer).toMatchObject({ ok: true, value: { score: expect.any(Number) } });
    // The first body is the profile's (random_seed, max_completion_tokens, its extra field); Acme refuses random_seed
    // in words only its hook reads, so the seed is dropped and the call asked again at once.
    const bodies = sim.requests.map((r) => r.body as Record<string, unknown>);
    expect(bodies).toHaveLength(2);
    expect(bodies[0]).toMatchObject({ random_seed: 7, max_completion_tokens: 300, acme_trace: false });
    expect(bodies[0]).not.toHaveProperty('seed');
    expect(bodies[1]).not.toHaveProperty('random_seed');
    expect(calls).toEqual([
      { ok: false, errorKind: 'dropped:random_seed' },
      { ok: true, errorKind: null },
    ]);
  } finally {
    await sim.close();
  }
});
