/** The plugins Runtrail ships with; the runtime's AgentRegistry is built from this list. */
import type { Agent } from '../runtime/agent.js';
import { createChatPlugin } from './chat/chat-plugin.js';
import { createFeedbackLensPlugin, type FeedbackLensOptions } from './feedbacklens/feedbacklens-plugin.js';
import { createFileSummaryPlugin } from './file-summary/file-summary-plugin.js';

export interface BuiltinPluginOptions {
  /** e.g. the compute-skill tool (`execute_skill`) for large CSVs */
  feedbacklens?: FeedbackLensOptions;
}

export function builtinPlugins(opts: BuiltinPluginOptions = {}): Agent[] {
  return [createFeedbackLensPlugin(opts.feedbacklens), createFileSummaryPlugin(), createChatPlugin()];
}
