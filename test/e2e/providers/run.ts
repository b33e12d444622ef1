import fs from 'node:fs';
import path from 'node:path';
import { benchmarkRun } from '../../../workflows';
import { progressQuery } from '../../../contract/control';
import type { PauseState } from '../../../contract/run';
import { runInput } from '../../../client/startRun';
import { parseCsv } from '../../../core/io/csv';
import { extractJson } from '../../../core/llm/providers/extract';
import type { SimServer } from '../../../sim/server';
import type { StoredJudgment, StoredResponse } from '../../../core/model/types';
import { runConfig, tempDir, withWorker } from '../../support/harness';
import { decodedHistory } from '../../support/judges';

/** A few LATTICE queries: enough for every unit to be asked, small enough for a run per provider profile. */
export const QUERIES = [1, 2, 3].map((i) => ({
  id: `t${i}-c${i}`,
  text: `Should I bridge USDC to Base, case ${i}?`,
  task: `T${i}`,
  category: `C${i}`,
}));
export const KEY = 'canary-provider-key-5d1c9a';

export interface ProviderRun {
  runId: string;
  status: string;
  elapsedMs: number;
  judgments: StoredJudgment[];
  responses: StoredResponse[];
  csv: string[][];
  history: string;
  llmCalls: Array<{ role: string; ok: boolean; errorKind: string | null }>;
  reportDir: string;
  /** The run paused itself (its breaker: quota, an endpoint failing from the start): why. The test then cancelled it. */
  paused?: PauseState;
}

/** One small LATTICE run against sim servers, the judge and copilots configured like a user would (provider: and keys). */
export async function providerRun(
  name: string,
  fields: { judge: Record<string, unknown>; copilots: Array<Record<string, unknown>>; queries?: typeof QUERIES },
): Promise<ProviderRun> {
  const env = { ...process.env, PROVIDER_KEY: KEY };
  return withWorker(
    `providers-${name}`,
    async ({ client, taskQueue, store }) => {
      const cfg = runConfig(tempDir(), {
        protocol: 'lattice',
        queries: fields.queries ?? QUERIES,
        judge: { apiKeyEnv: 'PROVIDER_KEY', maxAttempts: 3, ...fields.judge },
        copilots: fields.copilots,
      });
      const runId = `run-providers-${name}-${Date.now()}`;
      const started = Date.now();
      const handle = await client.workflow.start(benchmarkRun, {
        taskQueue,
        workflowId: runId,
        args: [runInput(cfg, runId)],
      });
      // A run that pauses itself waits for a person; the test records why and cancels it.
      let paused: PauseState | undefined;
      const watching = (async () => {
        for (;;) {
          const progress = await handle.query(progressQuery).catch(() => undefined);
          if (progress?.paused) {
            paused = progress.paused;
            await handle.cancel();
            return;
          }
          if ((await handle.describe()).status.name !== 'RUNNING') return;
          await new Promise((resolve) => setTimeout(resolve, 250));
        }
      })();
      const result = await handle.result().catch((error: unknown) => ({ failed: String(error) }));
      await watching;
      const elapsedMs = Date.now() - started;
      const run = (await store.getRun(runId))!;
      const reportDir = 'reportPath' in result ? path.dirname(result.reportPath) : '';
      const csvFile = reportDir ? path.join(reportDir, 'results.csv') : '';
      // A pause whose every remaining item was already in flight ends when they finish, and the run completes (the
      // history says so): the pause is then read from the report's control history.
      if (!paused && reportDir) {
        const history =
          (
            JSON.parse(fs.readFileSync(path.join(reportDir, 'report.json'), 'utf8')) as {
              control?: { history?: Array<{ action: string; by: PauseState['by']; reason: string; at: string }> };
            }
          ).control?.history ?? [];
        const step = history.find((h) => h.action === 'pause');
        if (step) paused = { by: step.by, reason: step.reason, at: step.at };
      }
      return {
        runId,
        status: run.status,
        elapsedMs,
        judgments: await store.judgments(runId, run.rubricVersion),
        responses: await store.responses(runId),
        csv: csvFile && fs.existsSync(csvFile) ? parseCsv(fs.readFileSync(csvFile, 'utf8'), 'results.csv') : [],
        history: decodedHistory(await handle.fetchHistory()),
        llmCalls: (await store.llmCalls(runId)).map((c) => ({ role: c.role, ok: c.ok, errorKind: c.errorKind })),
        reportDir,
        ...(paused ? { paused } : {}),
      };
    },
    env,
  );
}

/**
 * Every ok judgment's scores are those of the judge's last readable answer about that response (found in the sim's
 * log by the response text it was shown), read as robustly as judgeflow reads it.
 */
export function expectScoresFromJudge(run: ProviderRun, judge: SimServer): void {
  const texts = new Map(run.responses.map((r) => [`${r.queryId}/${r.copilot}`, r.text ?? '']));
  for (const j of run.judgments.filter((x) => x.status === 'ok')) {
    const shown = texts.get(`${j.queryId}/${j.copilot}`)!;
    const asked = judge.requests.filter(
      (r) =>
        r.content !== undefined && JSON.stringify(r.body?.messages ?? '').includes(JSON.stringify(shown).slice(1, -1)),
    );
    const answers = asked.map((r) => extractJson(r.content!)).filter((a): a is { value: any } => 'value' in a);
    expect(answers.length).toBeGreaterThan(0);
    const last = answers[answers.length - 1].value as Record<string, { score: number }>;
    expect(j.scores).toEqual(Object.fromEntries(Object.entries(last).map(([d, v]) => [d, v.score])));
  }
}

/** The key reached the endpoint but no history, report file or stored record. */
export function expectNoKeyLeak(run: ProviderRun, servers: SimServer[]): void {
  expect(servers.some((s) => s.requests.some((r) => r.headers.authorization === `Bearer ${KEY}`))).toBe(true);
  expect(run.history).not.toContain(KEY);
  expect(JSON.stringify([run.judgments, run.responses, run.csv])).not.toContain(KEY);
  if (run.reportDir)
    for (const f of fs.readdirSync(run.reportDir))
      if (fs.statSync(path.join(run.reportDir, f)).isFile())
        expect(fs.readFileSync(path.join(run.reportDir, f), 'utf8')).not.toContain(KEY);
}
