/**
 * Runs before every test file (jest setupFiles): workers started by tests log errors only (client/connection.ts reads
 * JUDGEFLOW_LOG_LEVEL), so the warnings of activity failures that tests cause on purpose ("Activity failed", retries)
 * stay out of the output. JUDGEFLOW_TEST_LOGS=1 keeps the workers' usual level.
 */
if (process.env.JUDGEFLOW_TEST_LOGS !== '1') process.env.JUDGEFLOW_LOG_LEVEL ??= 'ERROR';
