import { Breaker, failFastFrom } from '../../workflows/breaker';

const wrongPath = {
  kind: 'invalid_reply',
  message: 'the reply has no answer at answerPath "data.text"',
  transient: false,
};
const badKey = { kind: 'http', message: 'HTTP 401: invalid api key', transient: false };
const timeout = { kind: 'timeout', message: 'timed out after 30 s' };

/** Feed outcomes in order; the reasons the breaker gave, with the item (1-based) that tripped it. */
function trips(
  breaker: Breaker,
  outcomes: Array<typeof wrongPath | typeof timeout | undefined>,
): Array<[number, string]> {
  return outcomes.flatMap((o, i) => {
    const reason = breaker.observe(o);
    return reason ? [[i + 1, reason] as [number, string]] : [];
  });
}

test('failFast defaults: first 5 items, a window of 20 at a failure rate of 0.5; false turns the item rules off', () => {
  expect(failFastFrom(undefined)).toEqual({ firstCalls: 5, window: 20, maxFailureRate: 0.5 });
  expect(failFastFrom({ window: 10 })).toEqual({ firstCalls: 5, window: 10, maxFailureRate: 0.5 });
  expect(failFastFrom(false)).toBe(false);
});

test("the first-calls rule: the first 5 items all failing for a lasting reason trip it, in the endpoint's words; one success among them does not", () => {
  expect(trips(new Breaker('copilot MyAPI', failFastFrom(undefined)), Array(8).fill(wrongPath))).toEqual([
    [5, `copilot MyAPI failing: ${wrongPath.message}`],
  ]);
  expect(
    trips(new Breaker('copilot MyAPI', failFastFrom(undefined)), [
      wrongPath,
      wrongPath,
      undefined,
      wrongPath,
      wrongPath,
      wrongPath,
    ]),
  ).toEqual([]);
  expect(trips(new Breaker('copilot MyAPI', failFastFrom(undefined)), Array(5).fill(timeout))).toEqual([]);
});

test('the failure-rate window: 10 of the last 20 items failing for a lasting reason trip it with the rate and the top reason; transient failures never count', () => {
  // Working at first (the first-calls rule holds), then every other item fails: the 20th item completes a window at 50%.
  const alternating = [
    ...Array(10).fill(undefined),
    ...Array.from({ length: 20 }, (_, i) => (i % 2 ? undefined : i % 6 ? wrongPath : badKey)),
  ];
  const tripped = trips(new Breaker('copilot MyAPI', failFastFrom(undefined)), alternating);
  expect(tripped[0][0]).toBe(10 + 19); // failures at items 11, 13, …, 29: the window of items 10–29 holds 10
  expect(tripped[0][1]).toBe(`copilot MyAPI failing: 10 of the last 20 items failed: ${wrongPath.message}`);
  // Below the rate: 9 of 20.
  const below = [...Array(11).fill(undefined), ...Array(9).fill(badKey), ...Array(11).fill(undefined)];
  expect(trips(new Breaker('the judge', failFastFrom(undefined)), below)).toEqual([]);
  expect(
    trips(new Breaker('the judge', failFastFrom(undefined)), [...Array(5).fill(undefined), ...Array(30).fill(timeout)]),
  ).toEqual([]);
  // A smaller window and rate, as configured; after a trip the window starts empty.
  const small = trips(new Breaker('the judge', failFastFrom({ window: 4, maxFailureRate: 0.75 })), [
    undefined,
    ...Array(8).fill(badKey),
  ]);
  expect(small.map(([at]) => at)).toEqual([4, 8]);
  expect(small[0][1]).toBe(`the judge failing: 3 of the last 4 items failed: ${badKey.message}`);
  expect(trips(new Breaker('the judge', false), Array(40).fill(badKey))).toEqual([]);
});

test('quota trips at once, whatever failFast says; reset starts the breaker afresh (resume --config)', () => {
  expect(
    trips(new Breaker('the judge', false), [
      undefined,
      { kind: 'judge_insufficient_quota', message: 'You exceeded your current quota' },
    ]),
  ).toEqual([[2, 'the judge out of quota or credit: You exceeded your current quota']]);
  const breaker = new Breaker('copilot MyAPI', failFastFrom(undefined));
  expect(trips(breaker, Array(5).fill(wrongPath))).toHaveLength(1);
  breaker.reset(failFastFrom(undefined));
  expect(trips(breaker, Array(5).fill(wrongPath))).toEqual([[5, `copilot MyAPI failing: ${wrongPath.message}`]]);
});
