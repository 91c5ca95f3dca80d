import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { builtinPlugins } from '../../src/plugins/builtin-plugins.js';
import { CHAT_HELP, chatInputSchema, createChatPlugin } from '../../src/plugins/chat/chat-plugin.js';
import { createTempWorkspace } from './helpers/temp-workspace.js';
import { jsonSchemaOf, parseSchema } from '../../src/tools/schema.js';

const chat = createChatPlugin();
const reply = async (text: string) => (await chat.offlineProcedure!({ system: '', messages: [{ role: 'user', content: text }], tools: [] })).text;

describe('chat plugin', () => {
  it('explains the commands when asked for help', async () => {
    expect(await reply('/help')).toBe(CHAT_HELP);
    expect(await reply('what can you do?')).toBe(CHAT_HELP);
    for (const cmd of ['/run <plugin> key=value… -- <goal>', '/runs', '/cancel', '/help']) expect(CHAT_HELP).toContain(cmd);
  });
  it('greets, and answers any other text with a pointer to the commands, never a tool call', async () => {
    expect(await reply('hello')).toMatch(/^Hello!/);
    const t = await reply('what is the weather in Hanoi');
    expect(t).toContain('"what is the weather in Hanoi"');
    expect(t).toContain('/run');
    const turn = await chat.offlineProcedure!({ system: '', messages: [{ role: 'user', content: 'x' }], tools: [] });
    expect(turn.toolCalls).toBeUndefined();
  });
  it('has no tools, artifacts or validators and a strict input', () => {
    const ws = createTempWorkspace();
    expect(chat.createTools({ runId: 'r', input: {}, goal: '', workspace: ws, notice: () => {} })).toEqual([]);
    ws.dispose();
    expect(chat.artifacts).toEqual([]);
    expect(chatInputSchema.safeParse({ message: 'hi' }).success).toBe(true);
    expect(chatInputSchema.safeParse({ nope: 1 }).success).toBe(false);
    expect(chatInputSchema.safeParse({ message: 'x'.repeat(8001) }).success).toBe(false);
  });
});

describe('builtinPlugins', () => {
  const plugins = builtinPlugins();
  it('ships feedbacklens, file_summary and chat with their default skills', () => {
    expect(plugins.map((p) => [p.name, p.defaultSkill])).toEqual([
      ['feedbacklens', 'feedback_analysis'],
      ['file_summary', 'file_summary'],
      ['chat', 'chat'],
    ]);
  });
  it('gives every tool a JSON Schema a provider can use, and plans only name known tools', () => {
    const ws = createTempWorkspace();
    const inputs: Record<string, unknown> = { feedbacklens: { csv_path: 'input/a.csv' }, file_summary: { path: 'input/a.md' }, chat: {} };
    for (const p of plugins) {
      const tools = p.createTools({ runId: 'r', input: parseSchema(p.inputSchema, inputs[p.name]), goal: '', workspace: ws, notice: () => {} });
      for (const t of tools) expect(jsonSchemaOf(t.parameters)).toMatchObject({ type: 'object' });
      const names = new Set(tools.map((t) => t.name));
      for (const step of p.plan) for (const tool of step.tools) expect(names.has(tool)).toBe(true);
      for (const a of p.artifacts) expect(a.path).not.toMatch(/\//);
    }
    ws.dispose();
  });
  it('passes extra tools (the compute-skill seam) to feedbacklens and its plan', () => {
    const [fl] = builtinPlugins({
      feedbacklens: {
        extraTools: () => [{ name: 'execute_skill', description: 'd', parameters: z.object({}), execute: async () => ({ ok: true, content: '{}' }) }],
        extraToolNames: ['execute_skill'],
      },
    });
    const ws = createTempWorkspace();
    const tools = fl.createTools({ runId: 'r', input: { csv_path: 'x.csv' }, goal: '', workspace: ws, notice: () => {} });
    ws.dispose();
    expect(tools.map((t) => t.name)).toContain('execute_skill');
    expect(fl.plan[1].tools).toContain('execute_skill');
  });
});
