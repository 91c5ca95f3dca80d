/**
 * What a run records of its model calls: `capture: { model_io, max_call_bytes }` in config.json and in
 * an agent's frontmatter. Recording is on unless either turns it off (privacy wins); the agent's limit
 * wins over the project's.
 */
import { DEFAULT_MAX_CALL_BYTES } from './model-call-cap.js';

export interface CaptureSettings {
  /** Record each model call's request and response in runtime/model_calls.jsonl; default true. */
  model_io?: boolean;
  /** A call's record above this many bytes is cut (what was cut is stated in it); default 1 MB. */
  max_call_bytes?: number;
}

export interface ResolvedCapture {
  model_io: boolean;
  max_call_bytes: number;
}

export function resolveCapture(project: CaptureSettings | undefined, agent: CaptureSettings | undefined): ResolvedCapture {
  return {
    model_io: project?.model_io !== false && agent?.model_io !== false,
    max_call_bytes: agent?.max_call_bytes ?? project?.max_call_bytes ?? DEFAULT_MAX_CALL_BYTES,
  };
}
