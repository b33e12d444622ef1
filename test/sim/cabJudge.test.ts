import OpenAI from 'openai';
import { startSimServer } from '../../sim/server';

/** The simulator's CryptoAnalystBench ranking agrees with the scores it gave earlier in the same conversation. */
test('the simulated judge ranks the responses by the mean of its own scores, best first, ties in the order shown; the same answer every time', async () => {
  const sim = await startSimServer({});
  try {
    const client = new OpenAI({ baseURL: sim.url, apiKey: 'x' });
    const labels = ['Response #1', 'Response #2', 'Response #3'];
    const scored = (s: number) =>
      JSON.stringify({
        temporal_relevance: { score: s, reasoning: '' },
        data_consistency: { score: s, reasoning: '' },
        depth: { score: s, reasoning: '' },
        relevance: { score: s, reasoning: '' },
      });
    const messages: OpenAI.ChatCompletionMessageParam[] = [
      { role: 'system', content: 'judge' },
      { role: 'user', content: 'Evaluate Response #1 for this query.' },
      { role: 'assistant', content: 'not json' }, // an invalid answer re-asked: the next one counts
      { role: 'user', content: 'Answer with valid JSON.' },
      { role: 'assistant', content: scored(5) },
      { role: 'user', content: 'Evaluate Response #2 for this query.' },
      { role: 'assistant', content: scored(8) },
      { role: 'user', content: 'Evaluate Response #3 for this query.' },
      { role: 'assistant', content: scored(5) },
      { role: 'user', content: 'Rank all 3 responses.' },
    ];
    const schema = {
      type: 'object',
      properties: {
        ranking: { type: 'array', items: { type: 'string', enum: labels } },
        rationale: { type: 'string' },
      },
    };
    const ask = async () =>
      JSON.parse(
        (
          await client.chat.completions.create({
            model: 'judge',
            messages,
            response_format: { type: 'json_schema', json_schema: { name: 'cab_ranking', schema } },
          })
        ).choices[0].message.content!,
      );
    const first = await ask();
    expect(first.ranking).toEqual(['Response #2', 'Response #1', 'Response #3']);
    expect(first.rationale).toContain('Response #2 (8.00)');
    expect(await ask()).toEqual(first);
  } finally {
    await sim.close();
  }
});
