import type { ResultsStore } from '../../core/model/store';
import { hashInt } from './judges';

/**
 * A finished LATTICE run written through the store API: 4 copilots × 20 queries, every response a Markdown answer that
 * carries a visible "quality" figure (what the scripted annotators go by), judged with totals equal to that figure.
 * Copilot names and models are distinctive words so a test can search everything the app sends for them.
 */
export const STUDY_COPILOTS = ['Aurora', 'Borealis', 'Cirrus', 'Dynamo'];
export const STUDY_MODELS = ['aurora-large-v2', 'borealis-mini-7b', 'cirrus-pro-2025', 'dynamo-chat-xl'];
export const HOSTILE = {
  script: '<script>window.__pwned = "script"; alert("script")</script>',
  img: '<img src="http://127.0.0.1:9/x.png" onerror="window.__pwned = \'img\'; alert(\'img\')">',
  link: "[claim your airdrop](javascript:window.__pwned='link';alert('link'))",
  remoteImage: '![chart](http://127.0.0.1:9/chart.png)',
};

/** Distinct per query (no two copilots equal), 20–95. */
export function latent(queryId: string, copilot: string): number {
  const base = [20, 45, 70, 95];
  const order = [...STUDY_COPILOTS].sort((a, b) => hashInt(`${queryId}/${a}`) - hashInt(`${queryId}/${b}`));
  return base[order.indexOf(copilot)] - (hashInt(`${queryId}+${copilot}`) % 5);
}

export function answerText(queryId: string, copilot: string): string {
  const q = latent(queryId, copilot);
  const hostile = Object.values(HOSTILE).join('\n\n');
  return `## Assessment\n\nQuality figure: **${q}**.\n\n- Funding rates are *positive*; watch \`open interest\`.\n- Size positions to risk.\n\n| metric | value |\n|---|---|\n| TVL | $${q}m |\n\n${hostile}`;
}

/** LATTICE queries carry task and category; CryptoAnalystBench ones a tag (its totals are 4–40 sums, here latent / 2.5). */
export async function writeFinishedRun(
  store: ResultsStore,
  runId: string,
  output: string,
  totals: (queryId: string, copilot: string) => number = latent,
  protocol: 'lattice' | 'cab' = 'lattice',
): Promise<string[]> {
  const snapshotId = `snap-study-${protocol}`;
  const queries = Array.from({ length: 20 }, (_, i) => {
    const n = String(i + 1).padStart(2, '0');
    const labels =
      protocol === 'lattice'
        ? { task: `T${(i % 4) + 1}`, category: `C${(i % 5) + 1}` }
        : { tags: ['DeFi', 'Meme Coins', 'Macro'][i % 3] };
    return {
      id: `q${n}`,
      text: `Question ${n}: should I rotate from ETH into SOL before the upgrade?`,
      ...labels,
      ...(i === 1
        ? {
            history: [
              { role: 'user' as const, content: 'I hold **10 ETH**.' },
              { role: 'assistant' as const, content: 'Noted: <b>10 ETH</b> on mainnet.' },
            ],
          }
        : {}),
    };
  });
  await store.putSnapshot({ snapshotId, createdAt: new Date().toISOString(), parentId: null, meta: {} }, queries);
  await store.createRun({
    runId,
    protocol,
    snapshotId,
    rubricVersion: 'rubric-test',
    judge: { model: 'judge-model', baseURL: 'http://127.0.0.1:1/v1', temperature: 0 },
    copilots: STUDY_COPILOTS,
    startedAt: new Date().toISOString(),
    sourceRunId: null,
    config: {
      protocol,
      output,
      copilots: STUDY_COPILOTS.map((name, i) => ({ name, type: 'openai', model: STUDY_MODELS[i] })),
    },
  });
  const now = new Date().toISOString();
  for (const q of queries)
    for (const [i, copilot] of STUDY_COPILOTS.entries()) {
      // One failed and one missing response, which the study must leave out and count.
      const status =
        q.id === 'q20' && copilot === 'Dynamo' ? 'failed' : q.id === 'q19' && copilot === 'Cirrus' ? 'missing' : 'ok';
      await store.putResponse({
        runId,
        queryId: q.id,
        copilot,
        status,
        text: status === 'ok' ? answerText(q.id, copilot) : null,
        raw: null,
        html: null,
        adapter: 'openai',
        startedAt: now,
        finishedAt: now,
        latencyMs: 1234 + i,
        errorKind: status === 'failed' ? 'http' : null,
        errorMessage: null,
        conversationId: null,
        context: null,
      });
      if (status === 'ok')
        await store.putJudgment({
          runId,
          queryId: q.id,
          copilot,
          rubricVersion: 'rubric-test',
          status: 'ok',
          scores: { D1: 5 },
          rationales: { D1: `judge on ${copilot} ${q.id}` },
          total: totals(q.id, copilot),
          rank: null,
          position: null,
          error: null,
          judge: { model: 'judge-model', baseURL: 'x', temperature: 0, rubricVersion: 'rubric-test' },
          attempts: 1,
          createdAt: now,
        });
    }
  await store.finishRun(runId, 'completed', null, null, now);
  return queries.map((q) => q.id);
}
