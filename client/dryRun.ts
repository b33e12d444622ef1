import type { RunConfig } from './config';
import { protocolOptions, runJudges, runSamples, type StoredRunConfig } from '../activities/deps';
import { planCalls, type PlannedEndpoint } from '../core/cost';
import { protocolFor } from '../rubrics';
import { loadGroundingRubric } from '../rubrics/grounding';

/** What `judgeflow run --dry-run` prints: planned requests per endpoint, nothing started. */
export function dryRunPlan(config: RunConfig): { endpoints: PlannedEndpoint[]; totalCalls: number; estimatedCostUsd: number | null } {
  const protocol = protocolFor(config.protocol);
  const rubric = protocol.loadRubric(config.rubric ?? protocol.defaultRubricDir);
  const endpoints = planCalls({
    queries: protocol.parseQueries(config.queries),
    copilots: config.copilots as Array<{ name: string; type: string; model?: string; baseURL?: string; url?: string }>,
    judges: runJudges(config as unknown as StoredRunConfig),
    judgeCallsPerQuery: (answers) => runSamples(config as unknown as StoredRunConfig) * protocol.judgeCallsPerQuery(answers, protocolOptions(protocol, config as unknown as StoredRunConfig)),
    judgePromptChars: JSON.stringify(rubric.content).length,
    pricing: config.pricing,
  });
  if (config.grounding) {
    // One check per answer and judge: the claims, then (with citations) their citations.
    const grounding = config.grounding;
    const perAnswer = grounding.checks.includes('citations') ? 2 : 1;
    const judges = grounding.judge ? [{ name: 'grounding', model: grounding.judge.model, baseURL: grounding.judge.baseURL }] : runJudges(config as unknown as StoredRunConfig);
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
  return { endpoints, totalCalls: endpoints.reduce((n, e) => n + e.calls, 0), estimatedCostUsd: priced ? endpoints.reduce((n, e) => n + (e.estimatedCostUsd ?? 0), 0) : null };
}

export function describeDryRun(plan: ReturnType<typeof dryRunPlan>): string {
  const rows = plan.endpoints.map((e) => [`${e.role} ${e.name}`, e.endpoint, String(e.calls), e.estimatedCostUsd === null ? '–' : `$${e.estimatedCostUsd.toFixed(4)}`]);
  const header = ['WHO', 'ENDPOINT', 'CALLS', 'EST. COST'];
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i].length)));
  const lines = [header, ...rows].map((r) => r.map((c, i) => c.padEnd(widths[i])).join('  ').trimEnd());
  lines.push(
    `Total: ${plan.totalCalls} calls if every request succeeds first time (retries and re-asked invalid judge answers add to it)` +
      (plan.estimatedCostUsd === null ? '; add `pricing:` to the config for a cost estimate.' : `; estimated $${plan.estimatedCostUsd.toFixed(4)} (rough: ~4 characters a token, assumed answer lengths).`),
    'Dry run: nothing was started.',
  );
  return lines.join('\n');
}
