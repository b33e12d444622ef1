// Error helpers the workflows, the activities and the client share. Plain code with no imports: safe in the workflow sandbox.

/** "Activity task failed" says nothing; the innermost cause says why. */
export function rootCause(error: unknown): string {
  let e = error as { message?: string; cause?: unknown } | undefined;
  while (e && typeof e === 'object' && e.cause) e = e.cause as typeof e;
  return e?.message ?? String(error);
}
