import type { SimHandler } from '../../sim/server';

/** Pull the graded response text out of a LATTICE judge prompt (between the markers after "Copilot response:"). */
export function gradedText(body: any): string {
  const user = String(body.messages.find((m: any) => m.role === 'user')?.content ?? '');
  const m = user.match(/Copilot response:\n<<<\n([\s\S]*?)\n>>>/);
  return m ? m[1] : '';
}

/** The system prompt a judge request carries ('' if none): the rubric text a text-sensitive sim judge keys its scores on. */
export const systemOf = (body: any): string =>
  String(body.messages.find((m: any) => m.role === 'system')?.content ?? '');

export function hashInt(s: string): number {
  let h = 2166136261;
  for (const ch of s) h = Math.imul(h ^ ch.charCodeAt(0), 16777619) >>> 0;
  return h;
}

/** Deterministic scores a test can recompute: depends only on the graded text and the dimension id. */
export function scriptedScore(text: string, dim: string): number {
  return hashInt(`${text}|${dim}`) % 11;
}

/** A LATTICE judge that answers every requested dimension with scriptedScore, over real HTTP. */
export const scriptedLatticeJudge: SimHandler = (body) => {
  if (body.response_format?.type !== 'json_schema') return undefined; // copilots get the default behaviour
  const dims = Object.keys(body.response_format.json_schema.schema.properties);
  const text = gradedText(body);
  return JSON.stringify(
    Object.fromEntries(dims.map((d) => [d, { score: scriptedScore(text, d), rationale: `scripted ${d}` }])),
  );
};

/** A workflow history as text with every payload decoded, so tests can search what was really stored. */
export function decodedHistory(history: unknown): string {
  return JSON.stringify(history).replace(
    /"data":"([A-Za-z0-9+/=]+)"/g,
    (_, b64: string) => `"data":${JSON.stringify(Buffer.from(b64, 'base64').toString('utf8'))}`,
  );
}

/** scriptedLatticeJudge on Anthropic's Messages API: the dimensions are the forced tool's input_schema properties. */
export const scriptedLatticeToolJudge: SimHandler = (body) => {
  const tool = body.tools?.find((t: any) => t.name === body.tool_choice?.name);
  if (!tool) return undefined; // copilots get the default behaviour
  const text = gradedText(body);
  return JSON.stringify(
    Object.fromEntries(
      Object.keys(tool.input_schema.properties).map((d) => [
        d,
        { score: scriptedScore(text, d), rationale: `scripted ${d}` },
      ]),
    ),
  );
};
