import { z } from 'zod';
import { fenced } from './prompts';
import type { Turn } from './types';

/** One earlier turn of a multi-turn query, as every protocol's query schema accepts it. */
export const turnSchema: z.ZodType<Turn> = z
  .object({ role: z.enum(['user', 'assistant']), content: z.string() })
  .strict();

/**
 * The `{{history}}` block of a judge prompt: the user's earlier turns, or nothing for a single-turn query.
 * One wording for every protocol, so a judge reads the same context the same way whichever protocol asks.
 */
export function historyBlock(history: Turn[] | undefined): string {
  if (!history?.length) return '';
  const turns = history.map((t) => `${t.role === 'user' ? 'User' : 'Assistant'}: ${t.content}`).join('\n');
  return `\nPrevious turns of the user's conversation (context for the query below):\n${fenced(turns)}\n`;
}
