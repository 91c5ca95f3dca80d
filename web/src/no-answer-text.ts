/** What the run page shows where the answer would be when there is none: why, in the user's words. */
export function noAnswerText(finished: boolean, status: string): string {
  if (!finished) return 'Waiting for the model…';
  // a failed run's reason is in the diagnosis box under the answer
  if (status === 'failed') return 'No answer: the run failed (why is below).';
  if (status === 'cancelled') return 'No answer: the run was cancelled.';
  return 'The run ended without a written answer.';
}
