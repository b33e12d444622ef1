import type { SimProfile } from './types';

/** A FastAPI-served model whose validation refuses every request: `{"detail": [{"loc", "msg", "type"}]}`. */
export const FASTAPI_MESSAGE = 'prompt exceeds the 512-token limit of this deployment';
export const fastapiError: SimProfile = () => ({
  status: 422,
  body: JSON.stringify({ detail: [{ loc: ['body', 'messages'], msg: FASTAPI_MESSAGE, type: 'value_error' }] }),
});
