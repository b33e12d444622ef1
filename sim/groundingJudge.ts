/**
 * The simulator's grounding judge: answers requests whose answer schema is one of the grounding checks'
 * (`grounding_hallucination`, `grounding_extraction`, `grounding_citations`) by reading the prompt's tagged blocks
 * (<context>, <response>, <sources>, <claims>) and checking deterministically, so tests know what a judge must say.
 *
 * A claim is a sentence "The <metric> of <entity> is <value> [<source>]." (what sim/groundedCopilot.ts answers); the
 * context states facts as lines "<entity> <metric>: <value>". A claim is exact when the context has the same value
 * written the same way, derivable when the context's value rounds to it, contradicted when the context gives another
 * value, fabricated when the context says nothing about that entity and metric.
 */

type Message = { role: string; content: string };

export const isGroundingSchema = (name: unknown): boolean => typeof name === 'string' && name.startsWith('grounding_');

const CLAIM = /The (.+?) of (.+?) is (\$?[\d.,]+(?: (?:billion|million))?%?)(?: \[([^\]]+)\])?\./g;
const FACT = /^(.+?): (\$?[\d.,]+(?: (?:billion|million))?%?)$/;

function block(text: string, tag: string): string | null {
  const m = text.match(new RegExp(`<${tag}>\\n?([\\s\\S]*?)\\n?</${tag}>`));
  return m ? m[1] : null;
}

/** "$3.21 billion" → 3210000000; "$1,234" → 1234; with the precision it was written to (for rounding). */
export function parseValue(written: string): { value: number; step: number } {
  const scale = / billion$/.test(written) ? 1e9 : / million$/.test(written) ? 1e6 : 1;
  const digits = written.replace(/[$,%]| billion| million/g, '');
  const decimals = digits.includes('.') ? digits.split('.')[1].length : 0;
  return { value: Number(digits) * scale, step: 10 ** -decimals * scale };
}

interface Claim {
  text: string;
  entity: string;
  metric: string;
  written: string;
  source: string | null;
}

function claimsOf(response: string): Claim[] {
  return [...response.matchAll(CLAIM)].map((m) => ({ text: m[0].replace(/ \[[^\]]+\]\./, '.'), metric: m[1], entity: m[2], written: m[3], source: m[4] ?? null }));
}

function factsOf(text: string): Map<string, { line: string; written: string }> {
  const facts = new Map<string, { line: string; written: string }>();
  for (const line of text.split('\n').map((l) => l.trim())) {
    const m = line.match(FACT);
    if (m) facts.set(m[1], { line, written: m[2] });
  }
  return facts;
}

function verdict(claim: Claim, facts: Map<string, { line: string; written: string }>): { status: 'exact' | 'derivable' | 'fabricated' | 'contradicted'; excerpt: string | null } {
  const fact = facts.get(`${claim.entity} ${claim.metric}`);
  if (!fact) return { status: 'fabricated', excerpt: null };
  if (fact.written === claim.written) return { status: 'exact', excerpt: fact.line };
  const said = parseValue(claim.written);
  const known = parseValue(fact.written).value;
  return Math.abs(known - said.value) <= said.step / 2 ? { status: 'derivable', excerpt: fact.line } : { status: 'contradicted', excerpt: fact.line };
}

const numeric = (c: Claim) => ({ entity: c.entity, metric: c.metric, value: parseValue(c.written).value, unit: c.written.startsWith('$') ? 'USD' : null });

/** The JSON answer to one grounding request (the last user message is the prompt). */
export function groundingJudgeAnswer(schemaName: string, messages: Message[]): unknown {
  const prompt = [...messages].reverse().find((m) => m.role === 'user')?.content ?? '';
  const response = block(prompt, 'response') ?? '';
  const claims = claimsOf(response);
  if (schemaName === 'grounding_extraction') return { claims: claims.map((c) => ({ text: c.text, ...numeric(c) })) };
  if (schemaName === 'grounding_hallucination') {
    const facts = factsOf(block(prompt, 'context') ?? '');
    return { claims: claims.map((c) => ({ text: c.text, ...verdict(c, facts), ...numeric(c) })) };
  }
  // Citations: the numbered claims of the prompt, each against the source its sentence cites.
  const sources = new Map<string, string>();
  for (const part of (block(prompt, 'sources') ?? '').split(/\n\n+/)) {
    const m = part.match(/^\[([^\]]+)\]/);
    if (m) sources.set(m[1], part);
  }
  const listed = (block(prompt, 'claims') ?? '').split('\n').map((l) => l.match(/^(\d+)\. (.*)$/)).filter((m): m is RegExpMatchArray => m !== null);
  return {
    claims: listed.map(([, n, text]) => {
      const claim = claims.find((c) => c.text === text);
      if (!claim?.source) return { claim: Number(n), source: null, verdict: claim ? 'missing' : 'not_needed' };
      const cited = sources.get(claim.source);
      const found = cited ? verdict(claim, factsOf(cited.split('\n').slice(1).join('\n'))).status : 'fabricated';
      return { claim: Number(n), source: claim.source, verdict: found === 'exact' ? 'direct' : found === 'derivable' ? 'derivable' : 'incorrect' };
    }),
  };
}
