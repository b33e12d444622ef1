import { ApplicationFailure } from '@temporalio/activity';
import { InputError } from '../core/model/inputError';

/** The failure type the CLI turns back into an InputError (exit 2); workflows never retry it. */
export const INPUT_ERROR = 'InputError';

/** Bad input is the user's to fix: fail the activity at once (no retry), keeping the message that says what and where. */
export function inputFailure(error: InputError, message = error.message): ApplicationFailure {
  return ApplicationFailure.nonRetryable(message, INPUT_ERROR);
}

/** Run `work`, turning an InputError it throws into a non-retryable activity failure. */
export async function nonRetryableInput<T>(work: () => T | Promise<T>): Promise<T> {
  try {
    return await work();
  } catch (error) {
    throw error instanceof InputError ? inputFailure(error) : error;
  }
}
