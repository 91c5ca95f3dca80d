/** The chat plugin: free text from IM channels; no tools, no artifacts. Offline it explains the commands. */
import { z } from 'zod';
import type { Agent, ModelTurn, OfflineProcedure } from '../../runtime/agent.js';
import { lastUserText } from '../shared/conversation.js';

export const CHAT_VERSION = '1.0.0';

export const chatInputSchema = z
  .object({
    message: z.string().max(8000, { error: 'message must be at most 8000 characters' }).optional(),
  })
  .strict();
export type ChatInput = z.infer<typeof chatInputSchema>;

export const CHAT_HELP = [
  'I am Runtrail. I run agent plugins on your request and report every step here.',
  '',
  'Commands:',
  '/run <plugin> key=value… -- <goal>   start a run, e.g. /run feedbacklens csv_path=feedback.csv product_name="TaskFlow Pro" -- find the top problems',
  '/runs                                 list recent runs and their status',
  '/cancel <run_id>                      cancel a running run',
  '/help                                 show this help',
  '',
  'Plugins: feedbacklens (feedback CSV → analysis, backlog, report), file_summary (text or Markdown file → summary.md).',
].join('\n');

/** Deterministic replies: the offline model cannot chat, but it can point at what works. */
export const chatOfflineProcedure: OfflineProcedure = (state): ModelTurn => {
  const said = lastUserText(state.messages).trim();
  if (said === '' || /^\/?help\b/i.test(said) || /\b(help|commands?|what can you do|how do i)\b/i.test(said)) return { text: CHAT_HELP };
  if (/^(hi|hello|hey|good (morning|afternoon|evening)|xin chào|你好)\b/i.test(said)) return { text: `Hello! ${CHAT_HELP}` };
  const gist = said.length > 80 ? `${said.slice(0, 80)}…` : said;
  return {
    text: `I am running with the offline model, which does not hold free conversations, so I cannot answer "${gist}" directly. To get work done, start a run:\n\n${CHAT_HELP}`,
  };
};

export function createChatPlugin(): Agent<ChatInput> {
  return {
    name: 'chat',
    version: CHAT_VERSION,
    description: 'Free-text conversation for chat channels; answers and explains the /run, /runs, /cancel and /help commands.',
    inputSchema: chatInputSchema,
    fileInputs: [],
    defaultSkill: 'chat',
    defaultGoal: 'Answer the user briefly and helpfully.',
    promptFragments: [
      "You are Runtrail's chat assistant in a messaging app. Answer briefly, in the user's language.",
      `When the user wants work done, explain the commands:\n${CHAT_HELP}`,
    ],
    createTools: () => [],
    plan: [],
    artifacts: [],
    validators: [],
    offlineProcedure: chatOfflineProcedure,
  };
}
