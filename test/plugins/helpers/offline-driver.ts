/** A tiny agent loop: asks a plugin's offline procedure for turns and executes its tool calls. */
import { z } from 'zod';
import type { BusinessPlugin, ValidationIssue, WorkspaceAccess } from '../../../src/runtime/business-plugin.js';
import type { ChatMessage, ToolSpec } from '../../../src/providers/model-provider.js';
import type { AnyToolDefinition } from '../../../src/tools/tool.js';
import { contractValidator } from '../../../src/plugins/shared/contract-validator.js';

export interface DriveResult {
  finalText: string;
  messages: ChatMessage[];
  toolCalls: Array<{ name: string; ok: boolean; content: string }>;
  issues: ValidationIssue[];
}

export async function driveOffline<I>(
  plugin: BusinessPlugin<I>,
  input: unknown,
  workspace: WorkspaceAccess,
  opts: { goal?: string; maxIterations?: number; extraTools?: AnyToolDefinition[] } = {},
): Promise<DriveResult> {
  const parsed = plugin.inputSchema.parse(input);
  const goal = opts.goal ?? plugin.defaultGoal;
  const tools = [
    ...plugin.createTools({ runId: workspace.runId, input: parsed, goal, workspace, notice: () => {} }),
    ...(opts.extraTools ?? []),
  ];
  const specs: ToolSpec[] = tools.map((t) => ({ name: t.name, description: t.description, inputSchema: z.toJSONSchema(t.parameters) as Record<string, unknown> }));
  const messages: ChatMessage[] = [{ role: 'user', content: goal }];
  const toolCalls: DriveResult['toolCalls'] = [];
  let finalText = '';
  for (let i = 0; i < (opts.maxIterations ?? 20); i++) {
    const turn = await plugin.offlineProcedure({ system: plugin.promptFragments.join('\n'), messages, tools: specs });
    const calls = (turn.toolCalls ?? []).map((c, k) => ({ id: `call_${i}_${k}`, name: c.name, args: c.args }));
    messages.push({ role: 'assistant', content: turn.text ?? '', ...(calls.length ? { toolCalls: calls } : {}) });
    if (calls.length === 0) {
      finalText = turn.text ?? '';
      break;
    }
    for (const c of calls) {
      const tool = tools.find((t) => t.name === c.name);
      let ok = false;
      let content: string;
      if (!tool) content = `unknown tool ${c.name}`;
      else {
        const a = tool.parameters.safeParse(c.args);
        if (!a.success) content = `invalid arguments: ${a.error.message}`;
        else {
          const r = await tool.execute(a.data);
          ok = r.ok;
          content = r.content;
        }
      }
      toolCalls.push({ name: c.name, ok, content });
      messages.push({ role: 'tool', toolCallId: c.id, toolName: c.name, content, isError: !ok });
    }
  }
  const ctx = { runId: workspace.runId, input: parsed, workspace };
  const issues: ValidationIssue[] = [];
  for (const v of [contractValidator(plugin.artifacts), ...plugin.validators]) issues.push(...(await v.validate(ctx as never)));
  return { finalText, messages, toolCalls, issues };
}
