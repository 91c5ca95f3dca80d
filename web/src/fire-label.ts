/**
 * One fire of a schedule said once: the run it started is its link and its chip is the run's status;
 * a fire that started no run has only its chip, which says what happened and why, in words.
 */
export interface FireLike {
  outcome: 'started' | 'skipped' | 'not_started' | 'waiting';
  reason?: string;
  run_id?: string;
  run_status?: string;
}

const OUTCOME_WORDS: Record<FireLike['outcome'], string> = {
  started: 'started',
  skipped: 'skipped',
  not_started: 'not started',
  waiting: 'waiting',
};

/** The chip's text and its status class. */
export function fireChip(f: FireLike): { text: string; status: string } {
  if (f.run_id) return { text: f.run_status ?? OUTCOME_WORDS[f.outcome], status: f.run_status ?? 'model_thinking' };
  const words = OUTCOME_WORDS[f.outcome];
  return { text: f.reason ? `${words}: ${f.reason.replace(/_/g, ' ')}` : words, status: f.outcome === 'waiting' ? 'model_thinking' : 'cancelled' };
}
