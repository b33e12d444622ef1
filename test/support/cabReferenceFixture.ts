import { CAB_REFERENCE_FILES } from '../../rubrics/cab/reference';

/**
 * Stand-ins for the CryptoAnalystBench reference harness's files, in the same Python shape (the methods, f-strings and
 * fields the builder reads) but with test wording of our own: tests serve them from a local server instead of the
 * repository's raw host.
 */
export const FIXTURE_SCRIPT = `import json

eval_datetime = "01 January 2026"

class LLMEvaluationSystem:
    def _create_scoring_prompt(self, query: str, response: str, response_num: int, trace_context: str = None) -> str:
        """Docstring the builder must skip."""
        context_block = ""
        if trace_context and trace_context.strip():
            context_block = f"""
FIXTURE CONTEXT START
{trace_context}
FIXTURE CONTEXT END
"""
        return f"""Fixture scoring turn for item #{response_num}.

FIXTURE DATE: {eval_datetime}

FIXTURE QUERY: {query}
{context_block}
FIXTURE ITEM #{response_num}: {response}

Fixture criteria: freshness, coherence, depth, fit.

Reply as {{
    "temporal_relevance": {{"score": <1-10>, "reasoning": "<why>"}}
}}"""

    def _create_judge_llm(self):
        system_prompt = f"""Fixture system prompt, dated {eval_datetime}."""
        return system_prompt
`;

export const FIXTURE_TAXONOMY = `EVAL_DATETIME = "01 January 2026"

def build_prompt(query: str, response: str, trace_context: str = "") -> str:
    """Docstring the builder must skip."""
    context_block = ""
    return f"""Fixture taxonomy check, {EVAL_DATETIME}.

FIXTURE QUERY: {query}
{context_block}
FIXTURE ITEM: {response}

Reply as {{ "staleness_missing_time_bounds": {{ "score": <0 or 1>, "reasoning": "<why>" }} }}"""

class ErrorTaxonomyEvaluator:
    def __init__(self):
        self.judge = ChatJudgeLLM(llm, "Fixture taxonomy system prompt.")
`;

/** URL path (as /<commit>/<file>) → body, for a local server standing in for the raw-file host. */
export function cabReferenceBodies(): Record<string, string> {
  const byFile: Record<string, string> = { 'script.py': FIXTURE_SCRIPT, 'run_error_taxonomy.py': FIXTURE_TAXONOMY };
  return Object.fromEntries(
    Object.entries(CAB_REFERENCE_FILES).map(([file, commit]) => [
      `/${commit}/${file}`,
      byFile[file] ?? `# fixture ${file}\n`,
    ]),
  );
}
