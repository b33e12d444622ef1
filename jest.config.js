/** @type {import('jest').Config} */
module.exports = {
  testEnvironment: '<rootDir>/test/support/quietEnvironment.js',
  roots: ['<rootDir>/test'],
  testMatch: ['**/*.test.ts'],
  transform: { '^.+\\.(t|j)s$': ['@swc/jest', { jsc: { target: 'es2022' } }] },
  globalSetup: '<rootDir>/test/support/globalSetup.ts',
  globalTeardown: '<rootDir>/test/support/globalTeardown.ts',
  setupFiles: ['<rootDir>/test/support/quietTemporal.ts'],
  testTimeout: 120_000,
  maxWorkers: 2,
  // How long jest waits for a worker process to exit once asked, before killing it and printing "A worker process has
  // failed to exit gracefully" (jest's default: 500 ms). A worker that has run a hundred test files holds a heap of
  // 300–500 MB, and Node frees it page by page as the process ends (v8 Heap::TearDown: the stacks gdb took with
  // JUDGEFLOW_TEST_EXIT_STACKS=1 on 2026-12-04 show every worker there, its event loop ended, its exit event 1 ms after
  // jest's request, nothing but jest's IPC pipes left). On two busy cores that took 250 ms to over 500 ms. A process
  // held alive by a leaked handle is still killed and reported, 5 s later; docs/operations.md, "Tests and CI".
  workerGracefulExitTimeout: 5_000,
};
