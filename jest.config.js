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
};
