import type { IncomingMessage, ServerResponse } from 'node:http';
import { seededRandom } from '../core/stats/random';

/**
 * A copilot API that returns, with each answer, the context it answered from and its sources: the shape http copilots
 * read with `contextPath` and `sourcesPath`. Its answers are made of numeric claims, one sentence each, of which a
 * planted number are not grounded in that context, so tests know every claim's truth:
 *
 *   POST /_sim/grounded?claims=4&derivable=1&fabricated=1&contradicted=0[&padding=N]   body: { "query": "..." }
 *   → { "answer": "...", "context": ["Aave TVL: $3,214,567,890", ...], "sources": [{ "id": "1", "title", "url", "text" }] }
 *
 * Claim k reads "The <metric> of <entity> is <value> [<source>]." Exact claims repeat the context's value as written;
 * derivable ones round it (to billions or millions); fabricated ones are absent from the context and cite nothing;
 * contradicted ones cite the source that states another value. Entities and metrics depend on the query and k only, so
 * copilots answering one query make claims about the same things (where their values differ, at least one is wrong).
 */

const ENTITIES = [
  'Aave',
  'Uniswap',
  'Lido',
  'Hyperliquid',
  'Ethena',
  'Pendle',
  'Jupiter',
  'Morpho',
  'EigenLayer',
  'Sky',
];
const METRICS = ['TVL', '24h volume', 'fees last 30 days', 'market cap', 'open interest'];

export type PlantedKind = 'derivable' | 'exact' | 'fabricated' | 'contradicted';

export interface GroundedPlan {
  claims: number;
  derivable: number;
  fabricated: number;
  contradicted: number;
  /** Characters of unrelated tool output after the facts (to exercise the stored-context limit). */
  padding?: number;
}

export interface GroundedReply {
  answer: string;
  context: string[];
  sources: Array<{ id: string; title: string; url: string; text: string }>;
  /** What each claim is, in order (tests read it from the reply to know the truth). */
  planted: PlantedKind[];
}

const usd = (n: number) => `$${Math.round(n).toLocaleString('en-US')}`;

/** The planted claims of one answer: derivable ones first, then exact, fabricated and contradicted ones. */
export function groundedReply(query: string, plan: GroundedPlan): GroundedReply {
  const rng = seededRandom(`grounded:${query}`);
  const start = Math.floor(rng() * ENTITIES.length);
  const kinds: PlantedKind[] = Array.from({ length: plan.claims }, (_, k) =>
    k < plan.derivable
      ? 'derivable'
      : k < plan.claims - plan.fabricated - plan.contradicted
        ? 'exact'
        : k < plan.claims - plan.contradicted
          ? 'fabricated'
          : 'contradicted',
  );
  const sentences: string[] = [];
  const context: string[] = [];
  const sources: GroundedReply['sources'] = [];
  kinds.forEach((kind, k) => {
    const entity = ENTITIES[(start + k) % ENTITIES.length];
    const metric = METRICS[k % METRICS.length];
    // The true value depends on the query and the claim only, never on the copilot.
    const truth = Math.round((1 + seededRandom(`grounded:${query}:${k}`)() * 9) * 10 ** (7 + (k % 3)));
    const line = (value: number) => `${entity} ${metric}: ${usd(value)}`;
    const cite = (text: string) => {
      const id = String(sources.length + 1);
      sources.push({
        id,
        title: `${entity} dashboard`,
        url: `https://data.example/${entity.toLowerCase()}/${k}`,
        text,
      });
      return id;
    };
    if (kind === 'exact') {
      context.push(line(truth));
      sentences.push(`The ${metric} of ${entity} is ${usd(truth)} [${cite(line(truth))}].`);
    } else if (kind === 'derivable') {
      context.push(line(truth));
      const [scale, word] = truth >= 1e9 ? [1e9, 'billion'] : [1e6, 'million'];
      sentences.push(`The ${metric} of ${entity} is $${(truth / scale).toFixed(2)} ${word} [${cite(line(truth))}].`);
    } else if (kind === 'fabricated') {
      sentences.push(`The ${metric} of ${entity} is ${usd(truth * 1.37)}.`);
    } else {
      context.push(line(truth));
      sentences.push(`The ${metric} of ${entity} is ${usd(truth * 0.61)} [${cite(line(truth))}].`);
    }
  });
  if (plan.padding) context.push(`raw tool log: ${'.'.repeat(plan.padding)}`);
  return {
    answer: [`Here is what the data says about: ${query}`, '', ...sentences].join('\n'),
    context,
    sources,
    planted: kinds,
  };
}

function planOf(url: URL): GroundedPlan {
  const n = (name: string, fallback: number) => {
    const v = Number(url.searchParams.get(name) ?? fallback);
    return Number.isInteger(v) && v >= 0 ? v : fallback;
  };
  const claims = n('claims', 4);
  return {
    claims,
    derivable: n('derivable', 0),
    fabricated: n('fabricated', 0),
    contradicted: n('contradicted', 0),
    padding: n('padding', 0),
  };
}

/** The HTTP side: `{ query }` in, the grounded reply out (400 for a body without a query). */
export async function groundedCopilot(req: IncomingMessage, res: ServerResponse, body: string): Promise<void> {
  let query: unknown;
  try {
    query = (JSON.parse(body) as { query?: unknown }).query;
  } catch {
    query = undefined;
  }
  if (typeof query !== 'string') {
    res
      .writeHead(400, { 'content-type': 'application/json' })
      .end(JSON.stringify({ error: 'body must be {"query": "..."}' }));
    return;
  }
  const reply = groundedReply(query, planOf(new URL(req.url ?? '/', 'http://sim')));
  res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(reply));
}
