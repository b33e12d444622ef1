import path from 'node:path';
import { loadRunConfig } from '../../client/config';
import { startSimServer } from '../../sim/server';
import { REPO } from '../support/harness';

/**
 * examples/grounding-demo.yaml (docs/grounding.md's simulator recipe) loads, and its grounded copilot, asked as the
 * http adapter asks it, answers with the claims the query string plants plus the context and sources its paths read.
 */
test('examples/grounding-demo.yaml: grounding on, a copilot whose replies carry context and sources at its paths', async () => {
  const config = loadRunConfig(path.join(REPO, 'examples', 'grounding-demo.yaml'), () => undefined) as unknown as {
    grounding?: unknown;
    copilots: Array<Record<string, any>>;
  };
  expect(config.grounding).toBeDefined();
  const grounded = config.copilots.find((c) => c.name === 'Grounded')!;
  expect([grounded.type, grounded.answerPath, grounded.contextPath, grounded.sourcesPath]).toEqual([
    'http',
    'answer',
    'context',
    'sources',
  ]);
  const sim = await startSimServer();
  try {
    const url = grounded.url.replace('127.0.0.1:8000', `127.0.0.1:${sim.port}`);
    const res = await fetch(url, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ query: 'What is the TVL of Aave today?' }),
    });
    const reply = (await res.json()) as { answer: string; context: string[]; sources: unknown[] };
    expect(reply.answer.match(/\bThe [^\n]+? of [^\n]+? is /g)).toHaveLength(4); // one claim a sentence
    expect(reply.context.length).toBeGreaterThan(0);
    expect(reply.sources.length).toBeGreaterThan(0);
  } finally {
    await sim.close();
  }
});
