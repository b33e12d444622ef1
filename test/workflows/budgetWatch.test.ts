import { itemsUntilCap } from '../../workflows/runControl';

const spend = (usd: number, tokens = 0) => ({ usd, tokens, callsWithoutUsage: 0 });

describe('itemsUntilCap: when the budget watch looks again', () => {
  test('far from the cap: a window of items; within a window of it: after every item', () => {
    // $0.01 an item so far; $1 cap, $0.10 spent: 90 items left, a window of 6.
    expect(itemsUntilCap({ usd: 1 }, { count: 0, spent: spend(0) }, { count: 10, spent: spend(0.1) }, 6)).toBe(6);
    // $0.08 left: 8 items, less a window (the calls in flight) = 2.
    expect(itemsUntilCap({ usd: 1 }, { count: 0, spent: spend(0) }, { count: 92, spent: spend(0.92) }, 6)).toBe(2);
    // Within a window of the cap, or past it: one.
    expect(itemsUntilCap({ usd: 1 }, { count: 0, spent: spend(0) }, { count: 97, spent: spend(0.97) }, 6)).toBe(1);
    expect(itemsUntilCap({ usd: 1 }, { count: 0, spent: spend(0) }, { count: 120, spent: spend(1.2) }, 6)).toBe(1);
  });

  test('a token cap counts the same way; nothing measured yet: a window', () => {
    expect(
      itemsUntilCap({ tokens: 10_000 }, { count: 0, spent: spend(0, 0) }, { count: 10, spent: spend(0, 9_000) }, 6),
    ).toBe(1);
    expect(itemsUntilCap({ usd: 1 }, { count: 5, spent: spend(0.2) }, { count: 5, spent: spend(0.2) }, 6)).toBe(6);
  });
});
