/**
 * The simulator's grounding judge: answers requests whose answer schema is one of the grounding checks'
 * (`grounding_hallucination`, `grounding_extraction`, `grounding_citations`) by reading the prompt's tagged blocks
 * (<context>, <response>, <sources>, <claims>) and checking deterministically, so tests know what a judge must say.
 *
 * A claim is a sentence "The <metric> of <entity> is <value> [<source>]." (what sim/groundedCopilot.ts answers); the
 * context states facts as lines "<entity> <metric>: <value>". A claim is exact when the context has the same value
 * written the same way, derivable when the context's value rounds to it, contradicted when the context gives another
 * value, fabricated when the context says nothing about that entity and metric.
 *
 * An answer with no such sentence (the simulator's ordinary copilot answers, a demo's) is read more loosely: each of its
 * sentences that states a number is a claim, exact when the context holds that number as written, fabricated
 * otherwise. A fabricated claim is "same topic" when the context names its entity (a name in the sentence). The whole-answer labels follow the
 * reference's rules from the counts: every claim verified is factual, more verified than not partially factual, else
 * hallucinated; every citation right and every claim needing one cited is correct, either share at or below half
 * incorrect, else partially correct. Everything is a function of the prompt, so the same run gives the same answers.
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
  return [...response.matchAll(CLAIM)].map((m) => ({
    text: m[0].replace(/ \[[^\]]+\]\./, '.'),
    metric: m[1],
    entity: m[2],
    written: m[3],
    source: m[4] ?? null,
  }));
}

/** A sentence of free text that states a number, and the numbers it states as written. */
interface LooseClaim {
  text: string;
  numbers: string[];
  /** Its capitalised words (names, roughly), for "same topic". */
  names: string[];
}

const NUMBER = /\$?\d[\d,]*(?:\.\d+)?%?/g;
const HAS_NUMBER = /\d/;

function looseClaimsOf(response: string): LooseClaim[] {
  return response
    .split(/(?<=[.!?])\s+|\n+/)
    .map((t) => t.replace(/^[-*#>\s]+/, '').trim())
    .filter((t) => HAS_NUMBER.test(t.replace(/^\d+\.\s/, '')))
    .map((text) => ({
      text,
      numbers: text.match(NUMBER) ?? [],
      names: text
        .split(/\s+/)
        .filter((w) => /^[A-Z][A-Za-z]{2,}/.test(w))
        .map((w) => w.replace(/[^A-Za-z]/g, '')),
    }));
}

const verifiedStatus = (s: string) => s === 'exact' || s === 'derivable';

/** The reference's hallucination label and rate from claim verdicts (all verified; more verified than not; else). */
function wholeAnswer(statuses: string[]): {
  label: 'factual' | 'partially factual' | 'hallucinated';
  verificationRate: number;
} {
  const verified = statuses.filter(verifiedStatus).length;
  const rate = statuses.length ? verified / statuses.length : 1;
  const label =
    verified === statuses.length
      ? 'factual'
      : verified > statuses.length - verified
        ? 'partially factual'
        : 'hallucinated';
  return { label, verificationRate: Math.round(100 * rate) };
}

function factsOf(text: string): Map<string, { line: string; written: string }> {
  const facts = new Map<string, { line: string; written: string }>();
  for (const line of text.split('\n').map((l) => l.trim())) {
    const m = line.match(FACT);
    if (m) facts.set(m[1], { line, written: m[2] });
  }
  return facts;
}

function verdict(
  claim: Claim,
  facts: Map<string, { line: string; written: string }>,
): { status: 'exact' | 'derivable' | 'fabricated' | 'contradicted'; excerpt: string | null } {
  const fact = facts.get(`${claim.entity} ${claim.metric}`);
  if (!fact) return { status: 'fabricated', excerpt: null };
  if (fact.written === claim.written) return { status: 'exact', excerpt: fact.line };
  const said = parseValue(claim.written);
  const known = parseValue(fact.written).value;
  return Math.abs(known - said.value) <= said.step / 2
    ? { status: 'derivable', excerpt: fact.line }
    : { status: 'contradicted', excerpt: fact.line };
}

const numeric = (c: Claim) => ({
  entity: c.entity,
  metric: c.metric,
  value: parseValue(c.written).value,
  unit: c.written.startsWith('$') ? 'USD' : null,
});

/** The JSON answer to one grounding request (the last user message is the prompt). */
export function groundingJudgeAnswer(schemaName: string, messages: Message[]): unknown {
  const prompt = [...messages].reverse().find((m) => m.role === 'user')?.content ?? '';
  const response = block(prompt, 'response') ?? '';
  const claims = claimsOf(response);
  const loose = claims.length ? [] : looseClaimsOf(response);
  const none = { entity: null, metric: null, value: null, unit: null };
  if (schemaName === 'grounding_extraction')
    return {
      claims: claims.length
        ? claims.map((c) => ({ text: c.text, ...numeric(c) }))
        : loose.map((c) => ({ text: c.text, ...none })),
    };
  if (schemaName === 'grounding_hallucination') {
    const context = block(prompt, 'context') ?? '';
    const facts = factsOf(context);
    const mentions = (entity: string | null) => entity !== null && context.toLowerCase().includes(entity.toLowerCase());
    const verified = claims.length
      ? claims.map((c) => {
          const v = verdict(c, facts);
          return {
            text: c.text,
            status: v.status,
            sameTopic: v.status !== 'fabricated' || mentions(c.entity),
            excerpt: v.excerpt,
            ...numeric(c),
          };
        })
      : loose.map((c) => {
          const found = c.numbers.find((n) => context.includes(n));
          const line = found
            ? context
                .split('\n')
                .find((l) => l.includes(found))!
                .trim()
            : null;
          return {
            text: c.text,
            status: found ? 'exact' : 'fabricated',
            sameTopic: !!found || c.names.some(mentions),
            excerpt: line,
            ...none,
          };
        });
    return { claims: verified, ...wholeAnswer(verified.map((c) => c.status)) };
  }
  // Citations: the numbered claims of the prompt, each against the source its sentence cites.
  const sources = new Map<string, string>();
  for (const part of (block(prompt, 'sources') ?? '').split(/\n\n+/)) {
    const m = part.match(/^\[([^\]]+)\]/);
    if (m) sources.set(m[1], part);
  }
  const listed = (block(prompt, 'claims') ?? '')
    .split('\n')
    .map((l) => l.match(/^(\d+)\. (.*)$/))
    .filter((m): m is RegExpMatchArray => m !== null);
  const answers = listed.map(([, n, text]) => {
    const claim = claims.find((c) => c.text === text);
    // A free-text claim with a number needs a source; it cites none the simulator can read.
    if (!claim?.source)
      return { claim: Number(n), source: null, verdict: claim || HAS_NUMBER.test(text) ? 'missing' : 'not_needed' };
    const cited = sources.get(claim.source);
    const found = cited ? verdict(claim, factsOf(cited.split('\n').slice(1).join('\n'))).status : 'fabricated';
    return {
      claim: Number(n),
      source: claim.source,
      verdict: found === 'exact' ? 'direct' : found === 'derivable' ? 'derivable' : 'incorrect',
    };
  });
  return { claims: answers, label: citationLabel(answers.map((a) => a.verdict)) };
}

/** The reference's citation label from the verdicts: precision and completeness both whole, either at or below half, or between. */
function citationLabel(verdicts: string[]): 'correct' | 'partially correct' | 'incorrect' {
  const withCitation = verdicts.filter((v) => v === 'direct' || v === 'derivable' || v === 'incorrect').length;
  const correct = verdicts.filter((v) => v === 'direct' || v === 'derivable').length;
  const needing = verdicts.filter((v) => v !== 'not_needed').length;
  const precision = withCitation ? correct / withCitation : 1;
  const completeness = needing ? withCitation / needing : 1;
  if (precision === 1 && completeness === 1) return 'correct';
  return precision <= 0.5 || completeness <= 0.5 ? 'incorrect' : 'partially correct';
}
