/**
 * A plugin whose model only answers: no tools, no artifacts, no plan. The seam for chat-like
 * channels, demos and load tests that stream a model's text and nothing else.
 */
import { z } from 'zod';
import type { Agent } from '../runtime/agent.js';

export interface TextOnlyPluginOptions {
  name: string;
  description?: string;
  /** default: an empty object with no other keys */
  inputSchema?: z.ZodType<Record<string, unknown>>;
  /** what the offline model answers */
  offlineAnswer?: string;
}

export function createTextOnlyPlugin(opts: TextOnlyPluginOptions): Agent {
  const answer = opts.offlineAnswer ?? '';
  return {
    name: opts.name,
    version: '1.0.0',
    description: opts.description ?? 'answers in text only',
    inputSchema: opts.inputSchema ?? z.object({}).strict(),
    fileInputs: [],
    defaultSkill: null,
    defaultGoal: 'answer',
    promptFragments: [],
    createTools: () => [],
    plan: [],
    artifacts: [],
    validators: [],
    offlineProcedure: () => ({ text: answer }),
  };
}
