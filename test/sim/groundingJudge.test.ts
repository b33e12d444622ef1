import OpenAI from 'openai';
import { groundedReply } from '../../sim/groundedCopilot';
import { groundingJudgeAnswer, parseValue } from '../../sim/groundingJudge';
import { startSimServer } from '../../sim/server';

const prompt = (blocks: Record<string, string>) => [
  {
    role: 'user',
    content: Object.entries(blocks)
      .map(([tag, text]) => `<${tag}>\n${text}\n</${tag}>`)
      .join('\n\n'),
  },
];

test('the grounded copilot plants what it says: exact, derivable, fabricated and contradicted claims, cited accordingly', () => {
  const r = groundedReply('q', { claims: 5, derivable: 2, fabricated: 1, contradicted: 1 });
  expect(r.planted).toEqual(['derivable', 'derivable', 'exact', 'fabricated', 'contradicted']);
  expect(r.context).toHaveLength(4); // no line for the fabricated claim
  expect(r.sources.map((s) => s.id)).toEqual(['1', '2', '3', '4']);
  expect(groundedReply('q', { claims: 5, derivable: 2, fabricated: 1, contradicted: 1 })).toEqual(r); // deterministic
});

test('the simulated judge checks each claim against the context and each citation against its source', () => {
  const r = groundedReply('q', { claims: 5, derivable: 2, fabricated: 1, contradicted: 1 });
  const verified = groundingJudgeAnswer(
    'grounding_hallucination',
    prompt({ context: r.context.join('\n'), response: r.answer }),
  ) as { claims: Array<{ status: string; excerpt: string | null; value: number }> };
  expect(verified.claims.map((c) => c.status)).toEqual(r.planted);
  expect(verified.claims[2].excerpt).toBe(r.context[2]);
  const sources = r.sources.map((s) => `[${s.id}] ${s.title} <${s.url}>\n${s.text}`).join('\n\n');
  const claims = (
    groundingJudgeAnswer('grounding_extraction', prompt({ response: r.answer })) as { claims: Array<{ text: string }> }
  ).claims;
  const cited = groundingJudgeAnswer(
    'grounding_citations',
    prompt({ sources, response: r.answer, claims: claims.map((c, i) => `${i + 1}. ${c.text}`).join('\n') }),
  ) as { claims: Array<{ claim: number; verdict: string; source: string | null }> };
  expect(cited.claims.map((c) => c.verdict)).toEqual(['derivable', 'derivable', 'direct', 'missing', 'incorrect']);
  expect(parseValue('$3.21 billion')).toEqual({ value: 3.21e9, step: 1e7 });
});

test('over HTTP: a request whose answer schema is a grounding one is answered by the grounding judge', async () => {
  const sim = await startSimServer({});
  try {
    const client = new OpenAI({ baseURL: sim.url, apiKey: 'x' });
    const r = groundedReply('q', { claims: 2, derivable: 0, fabricated: 1, contradicted: 0 });
    const completion = await client.chat.completions.create({
      model: 'judge',
      messages: prompt({ context: r.context.join('\n'), response: r.answer }) as OpenAI.ChatCompletionMessageParam[],
      response_format: {
        type: 'json_schema',
        json_schema: { name: 'grounding_hallucination', schema: { type: 'object' } },
      },
    });
    expect(JSON.parse(completion.choices[0].message.content!).claims.map((c: { status: string }) => c.status)).toEqual([
      'exact',
      'fabricated',
    ]);
  } finally {
    await sim.close();
  }
});

test("the simulated judge labels the whole answer by the reference's rules and answers the schemas' new fields", () => {
  const r = groundedReply('q', { claims: 5, derivable: 2, fabricated: 1, contradicted: 1 });
  const verified = groundingJudgeAnswer(
    'grounding_hallucination',
    prompt({ context: r.context.join('\n'), response: r.answer }),
  ) as any;
  // 3 of 5 verified: more verified than not → partially factual, 60.
  expect(verified).toMatchObject({ label: 'partially factual', verificationRate: 60 });
  expect(verified.claims.every((c: any) => typeof c.sameTopic === 'boolean')).toBe(true);
  const sources = r.sources.map((s) => `[${s.id}] ${s.title} <${s.url}>\n${s.text}`).join('\n\n');
  const claims = (
    groundingJudgeAnswer('grounding_extraction', prompt({ response: r.answer })) as { claims: Array<{ text: string }> }
  ).claims;
  const cited = groundingJudgeAnswer(
    'grounding_citations',
    prompt({ sources, response: r.answer, claims: claims.map((c, i) => `${i + 1}. ${c.text}`).join('\n') }),
  ) as any;
  // precision 3/4, completeness 4/5: neither whole nor at or below half.
  expect(cited.label).toBe('partially correct');
  const clean = groundedReply('q', { claims: 3, derivable: 0, fabricated: 0, contradicted: 0 });
  expect(
    groundingJudgeAnswer(
      'grounding_hallucination',
      prompt({ context: clean.context.join('\n'), response: clean.answer }),
    ),
  ).toMatchObject({ label: 'factual', verificationRate: 100 });
});

test('an ordinary answer (no planted sentences) still has claims: each sentence stating a number, exact when the context has that number', () => {
  const answer =
    'Bitcoin is a decentralised currency. Its supply is capped at 21,000,000 coins. Ethereum processed 1,234 transactions per block last week.';
  const context = 'Bitcoin max supply: 21,000,000\nEthereum is a smart-contract platform';
  const a = groundingJudgeAnswer('grounding_hallucination', prompt({ context, response: answer })) as any;
  expect(a.claims.map((c: any) => [c.status, c.sameTopic])).toEqual([
    ['exact', true],
    ['fabricated', true], // Ethereum is discussed, the figure is not there: the reference's "same topic"
  ]);
  expect(a).toMatchObject({ label: 'hallucinated', verificationRate: 50 });
  expect((groundingJudgeAnswer('grounding_extraction', prompt({ response: answer })) as any).claims).toHaveLength(2);
  // Deterministic: the same prompt, the same answer.
  expect(groundingJudgeAnswer('grounding_hallucination', prompt({ context, response: answer }))).toEqual(a);
});
