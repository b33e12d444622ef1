/** Kept apart from runWorkflow.ts (which loads Temporal and the worker) so the CLI entry point stays light. */

/** Ctrl-C (SIGINT) or SIGTERM on an attached command: the workflow stays open on Temporal; main() says how to go on. */
export class Interrupted extends Error {
  constructor(
    readonly signal: NodeJS.Signals,
    readonly workflowId: string,
    readonly started: boolean,
  ) {
    super(`interrupted by ${signal}`);
    this.name = 'Interrupted';
  }
}

/** What to tell the user after Ctrl-C: the run is durable and still open, and how to continue or cancel it. */
export function interruptedMessage(e: Interrupted): string {
  if (!e.started) return `Interrupted (${e.signal}) before ${e.workflowId} was started; nothing was started.`;
  return [
    `Interrupted (${e.signal}). ${e.workflowId} is durable and still open on Temporal; nothing collected or judged so far is lost.`,
    `  continue it: run the same judgeflow run command again (it attaches to this run), or judgeflow worker (in this directory, or with the same JUDGEFLOW_HOME)`,
    `  follow it:   judgeflow status ${e.workflowId}`,
    `  cancel it:   judgeflow cancel ${e.workflowId}`,
  ].join('\n');
}
