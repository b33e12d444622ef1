import { cliInProcess } from '../support/cliInProcess';

/** `judgeflow tune`'s flags are checked before any server is asked: a bad one is exit 2 saying what to give. */
test('tune refuses flags that change nothing or name no endpoint, and non-positive or fractional values', async () => {
  const cases: Array<[string[], RegExp]> = [
    [['tune'], /missing RUN_ID/],
    [['tune', 'r1'], /nothing to change: give --judge-concurrency N, or --copilot NAME/],
    [['tune', 'r1', '--concurrency', '2'], /say which endpoint .*: --copilot NAME or --judge NAME/],
    [['tune', 'r1', '--copilot', 'A'], /--copilot A: give --concurrency, --requests-per-minute or --tokens-per-minute/],
    [['tune', 'r1', '--judge-concurrency', '0'], /--judge-concurrency must be a positive whole number, got "0"/],
    [
      ['tune', 'r1', '--copilot', 'A', '--requests-per-minute', '1.5'],
      /--requests-per-minute must be a positive whole number, got "1.5"/,
    ],
    [
      ['tune', 'r1', '--judge', 'a', '--concurrency', '2', '--judge-concurrency', '3'],
      /give the judge's concurrency once/,
    ],
  ];
  for (const [args, message] of cases) {
    const result = await cliInProcess(args, {});
    expect({ args, code: result.code }).toEqual({ args, code: 2 });
    expect(result.stderr).toMatch(message);
  }
  const help = await cliInProcess(['tune', '--help'], {});
  expect(help.code).toBe(0);
  expect(help.stdout).toMatch(/--judge-concurrency N {5}the judge's concurrency/);
});
