import type { RunConfig } from './config';
import { protocolOptions, runJudges, runSamples } from '../activities/deps';
import { planCalls, type PlannedEndpoint } from '../core/stats/cost';
import { loadConfiguredRubric, protocolFor } from '../rubrics';
import { loadGroundingRubric } from '../rubrics/grounding';
import { profileOf } from '../core/llm/providers';
import { chatRequestBody } from '../core/llm/providers/request';

/** What one endpoint's requests carry besides the model and messages, as its provider profile builds them. */
export interface EndpointParameters {
  who: string;
  provider: string;
  parameters: Record<string, unknown>;
  /** Whether the answer's JSON Schema is added to the prompt (a judge whose provider does not enforce it). */
  schemaInPrompt: boolean;
}

const SAMPLE_SCHEMA = { name: 'judgment', schema: { type: 'object', properties: {}, additionalProperties: false } };

export function endpointParameters(config: RunConfig): EndpointParameters[] {
  const out: EndpointParameters[] = [];
  const describe = (
    who: string,
    endpoint: Record<string, any>,
    json: boolean,
    temperature: number | null | undefined,
  ) => {
    const profile = profileOf({ provider: endpoint.provider, baseURL: endpoint.baseURL });
    const messages = [
      { role: 'system', content: 'S' },
      { role: 'user', content: 'U' },
    ];
    const body = chatRequestBody(
      profile,
      { ...endpoint, model: endpoint.model, temperature, seed: endpoint.sendSeed === false ? null : 1 } as never,
      messages,
      json ? SAMPLE_SCHEMA : null,
    );
    const { model: _m, messages: sent, ...parameters } = body;
    if (parameters.response_format && typeof parameters.response_format === 'object') {
      const format = parameters.response_format as { type: string; json_schema?: { strict?: boolean } };
      parameters.response_format =
        format.type === 'json_schema' ? `json_schema (strict: ${format.json_schema?.strict})` : format.type;
    }
    for (const name of ['seed', 'random_seed'])
      if (name in parameters) parameters[name] = '<derived from the run seed>';
    out.push({
      who,
      provider: profile.id,
      parameters,
      schemaInPrompt: JSON.stringify(sent) !== JSON.stringify(messages),
    });
  };
  const rubricTemperature = (() => {
    const protocol = protocolFor(config.protocol);
    return loadConfiguredRubric(protocol, config.rubric).judge.temperature;
  })();
  for (const j of runJudges(config))
    describe(
      `judge${j.name ? ` ${j.name}` : ''}`,
      j,
      true,
      j.temperature === undefined ? rubricTemperature : j.temperature,
    );
  for (const c of config.copilots as Array<Record<string, any>>)
    if (c.type === 'openai') describe(`copilot ${c.name}`, c, false, c.temperature);
  return out;
}

/** What `judgeflow run --dry-run` prints: planned requests per endpoint, nothing started. */
export interface BudgetCheck {
  usd?: number;
  tokens?: number;
  /** The planned totals against the cap: 'within', or 'over' (the run would pause before it finishes). */
  verdict: 'within' | 'over';
  plannedTokens: number;
}

export function dryRunPlan(config: RunConfig): {
  endpoints: PlannedEndpoint[];
  totalCalls: number;
  estimatedCostUsd: number | null;
  parameters: EndpointParameters[];
  budget?: BudgetCheck;
} {
  const protocol = protocolFor(config.protocol);
  const rubric = loadConfiguredRubric(protocol, config.rubric);
  const endpoints = planCalls({
    queries: protocol.parseQueries(config.queries),
    copilots: config.copilots as Array<{ name: string; type: string; model?: string; baseURL?: string; url?: string }>,
    judges: runJudges(config),
    judgeCallsPerQuery: (answers) =>
      runSamples(config) * protocol.judgeCallsPerQuery(answers, protocolOptions(protocol, config)),
    judgePromptChars: JSON.stringify(rubric.content).length,
    pricing: config.pricing,
  });
  if (config.grounding) {
    // One check per answer and judge: the claims, then (with citations) their citations.
    const grounding = config.grounding;
    const perAnswer = grounding.checks.includes('citations') ? 2 : 1;
    const judges = grounding.judge
      ? [
          {
            name: 'grounding',
            model: grounding.judge.model,
            baseURL: grounding.judge.baseURL,
            batch: runJudges(config).some((j) => j.batch),
          },
        ]
      : runJudges(config);
    const checks = planCalls({
      queries: protocol.parseQueries(config.queries),
      copilots: config.copilots as Array<{ name: string; type: string }>,
      judges,
      judgeCallsPerQuery: (answers) => answers * perAnswer,
      judgePromptChars: JSON.stringify(loadGroundingRubric(grounding.rubric).content).length,
      pricing: config.pricing,
    });
    endpoints.push(...checks.filter((e) => e.role === 'judge').map((e) => ({ ...e, name: `${e.name} (grounding)` })));
  }
  const priced = endpoints.some((e) => e.estimatedCostUsd !== null);
  const estimatedCostUsd = priced ? endpoints.reduce((n, e) => n + (e.estimatedCostUsd ?? 0), 0) : null;
  const plannedTokens = endpoints.reduce((n, e) => n + e.estimatedPromptTokens + e.estimatedCompletionTokens, 0);
  const cap = config.budget;
  const over = Boolean(
    cap &&
    ((cap.usd !== undefined && (estimatedCostUsd ?? 0) > cap.usd) ||
      (cap.tokens !== undefined && plannedTokens > cap.tokens)),
  );
  const budget = cap ? { ...cap, verdict: over ? ('over' as const) : ('within' as const), plannedTokens } : undefined;
  return {
    endpoints,
    totalCalls: endpoints.reduce((n, e) => n + e.calls, 0),
    estimatedCostUsd,
    parameters: endpointParameters(config),
    ...(budget ? { budget } : {}),
  };
}

export function describeDryRun(plan: ReturnType<typeof dryRunPlan>): string {
  const rows = plan.endpoints.map((e) => [
    `${e.role} ${e.name}`,
    e.endpoint,
    String(e.calls),
    e.estimatedCostUsd === null ? '–' : `$${e.estimatedCostUsd.toFixed(4)}`,
  ]);
  const header = ['WHO', 'ENDPOINT', 'CALLS', 'EST. COST'];
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i].length)));
  const lines = [header, ...rows].map((r) =>
    r
      .map((c, i) => c.padEnd(widths[i]))
      .join('  ')
      .trimEnd(),
  );
  lines.push(
    `Total: ${plan.totalCalls} calls if every request succeeds first time (retries and re-asked invalid judge answers add to it)` +
      (plan.estimatedCostUsd === null
        ? '; add `pricing:` to the config for a cost estimate.'
        : `; estimated $${plan.estimatedCostUsd.toFixed(4)} (rough: ~4 characters a token, assumed answer lengths).`),
    ...(plan.budget ? [budgetLine(plan.budget, plan.estimatedCostUsd)] : []),
  );
  if (plan.parameters.length) {
    lines.push('', 'Parameters each endpoint gets (besides model and messages):');
    for (const p of plan.parameters) {
      const sent =
        Object.entries(p.parameters)
          .map(([k, v]) => `${k}=${typeof v === 'string' ? v : JSON.stringify(v)}`)
          .join(', ') || '(none)';
      lines.push(
        `  ${p.who} [provider ${p.provider}]: ${sent}${p.schemaInPrompt ? "; the answer's JSON Schema added to the prompt" : ''}`,
      );
    }
  }
  lines.push('Dry run: nothing was started.');
  return lines.join('\n');
}

function budgetLine(budget: BudgetCheck, costUsd: number | null): string {
  const caps = [
    budget.usd !== undefined ? `$${budget.usd} (planned ≈ $${(costUsd ?? 0).toFixed(4)})` : '',
    budget.tokens !== undefined
      ? `${budget.tokens.toLocaleString('en')} tokens (planned ≈ ${budget.plannedTokens.toLocaleString('en')})`
      : '',
  ]
    .filter(Boolean)
    .join(' and ');
  return budget.verdict === 'over'
    ? `Budget ${caps}: the planned run is OVER it; it would pause at the cap (judgeflow resume RUN_ID --budget-usd N raises it).`
    : `Budget ${caps}: the planned run fits (at 80% a warning is recorded, at the cap the run pauses).`;
}
