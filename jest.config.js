/** @type {import('jest').Config} */
module.exports = {
  testEnvironment: 'node',
  roots: ['<rootDir>/test'],
  testMatch: ['**/*.test.ts'],
  transform: { '^.+\\.(t|j)s$': ['@swc/jest', { jsc: { target: 'es2022' } }] },
  globalSetup: '<rootDir>/test/support/globalSetup.ts',
  globalTeardown: '<rootDir>/test/support/globalTeardown.ts',
  setupFiles: ['<rootDir>/test/support/quietTemporal.ts'],
  testTimeout: 120_000,
  maxWorkers: 2,
  // Quiet by default: what tests, workers and the Temporal SDK print (warnings of failures a test causes on purpose,
  // progress lines) stays out of the output; a failing test still shows its assertion and stack. JUDGEFLOW_TEST_LOGS=1
  // shows everything, for debugging one test.
  silent: process.env.JUDGEFLOW_TEST_LOGS !== '1',
};
