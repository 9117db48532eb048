/**
 * Records the answers a test gets from the local HTTP API, so that they can be checked against
 * the API document afterwards: `call` with a memory.
 */
import type { SeenAnswer } from '../../support/api-document.js';
import { call, type ApiAnswer } from './api.js';

export interface AnswerRecorder {
  /** `call` of ./api.js, recording the request's method and path and the answer's status and body. */
  readonly call: typeof call;
  /** Every answer so far, in the order they came. */
  readonly answers: () => readonly SeenAnswer[];
}

export function recordAnswers(): AnswerRecorder {
  const answers: SeenAnswer[] = [];
  return {
    call: async (baseUrl, method, path, body): Promise<ApiAnswer> => {
      const answer = await call(baseUrl, method, path, body);
      answers.push({ method, path: new URL(path, baseUrl).pathname, status: answer.status, body: answer.body });
      return answer;
    },
    answers: () => [...answers],
  };
}
