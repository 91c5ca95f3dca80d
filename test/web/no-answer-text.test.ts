/** The answer box of a run without an answer says why, never a bare "No text.". */
import { describe, expect, it } from 'vitest';
import { noAnswerText } from '../../web/src/no-answer-text.js';

describe('the answer box without an answer', () => {
  it("says why in the user's words", () => {
    expect(noAnswerText(false, 'model_thinking')).toBe('Waiting for the model…');
    expect(noAnswerText(true, 'failed')).toBe('No answer: the run failed (why is below).');
    expect(noAnswerText(true, 'cancelled')).toBe('No answer: the run was cancelled.');
    expect(noAnswerText(true, 'completed')).toBe('The run ended without a written answer.');
    for (const s of ['failed', 'cancelled', 'completed']) expect(noAnswerText(true, s)).not.toBe('No text.');
  });
});
