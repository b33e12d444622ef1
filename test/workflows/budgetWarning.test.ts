import { initialControl, noteSpend } from '../../workflows/runControl';

// Workflow code's logger works only inside a workflow; here the watch's logic runs alone.
jest.mock('@temporalio/workflow', () => ({
  ...jest.requireActual('@temporalio/workflow'),
  log: { warn: jest.fn(), info: jest.fn() },
}));

/** The budget watch's words say what is true: "80%" below the cap, "budget reached, paused at" past it (issue 30). */
const spend = (usd: number) => ({ usd, tokens: 0, calls: 1, callsWithoutUsage: 0 });

test('a first look past the cap records "budget reached, paused at $X of the $Y budget", never "80% of the budget reached"', () => {
  const control = initialControl({ usd: 0.05 });
  noteSpend(control, spend(0.0542));
  expect(control.warnings).toEqual(['budget reached, paused at $0.0542 of the $0.05 budget spent']);
  expect(control.paused).toMatchObject({ reason: 'budget', by: 'budget', spentUsd: 0.0542, budgetUsd: 0.05 });
});

test('a look between 80% and the cap warns at 80%, once; the pause after it adds no second warning', () => {
  const control = initialControl({ usd: 0.05 });
  noteSpend(control, spend(0.042));
  expect(control.warnings).toEqual(['80% of the budget reached: $0.0420 of the $0.05 budget spent']);
  expect(control.paused).toBeNull();
  noteSpend(control, spend(0.051));
  expect(control.warnings).toHaveLength(1);
  expect(control.paused).toMatchObject({ reason: 'budget' });
});
