/**
 * @temporalio/client, loaded on first use instead of at import: it costs a few hundred ms of start-up, and help,
 * argument errors and store-only commands (`judgeflow runs` with nothing running) never talk to Temporal.
 * Modules import its types as usual (`import type`), which cost nothing at run time.
 */
export const temporalClient = () => require('@temporalio/client') as typeof import('@temporalio/client');
