import { workerLogLine } from '../../client/connection';

const at = BigInt(Date.parse('2026-12-01T23:56:33.367Z')) * 1_000_000n;
const core = {
  level: 'WARN',
  message: '[TMPRL1104] Workflow task duration exceeded 5 seconds.',
  timestampNanos: at,
  meta: { sdkComponent: 'core', target: 'temporalio_sdk_core::worker', [Symbol('log_timestamp')]: at },
};

test("an attached run leaves the SDK core's and the workflow's warnings out of its terminal; errors and a worker's lines stay", () => {
  expect(workerLogLine(core, true)).toBeUndefined();
  expect(workerLogLine({ ...core, meta: { sdkComponent: 'workflow' } }, true)).toBeUndefined();
  expect(workerLogLine({ ...core, level: 'ERROR' }, true)).toContain('[ERROR] [TMPRL1104]');
  expect(workerLogLine({ ...core, meta: { sdkComponent: 'activity' } }, true)).toContain('[WARN]');
  // A standalone worker: the core's line in the same one-line shape as the SDK's own, no colour codes, no symbol keys.
  expect(workerLogLine(core, false)).toBe(
    "2026-12-01T23:56:33.367Z [WARN] [TMPRL1104] Workflow task duration exceeded 5 seconds. { sdkComponent: 'core', target: 'temporalio_sdk_core::worker' }\n",
  );
});
