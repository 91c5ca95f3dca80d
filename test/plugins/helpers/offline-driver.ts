/** A tiny agent loop: asks a plugin's offline procedure for turns and executes its tool calls. */
import type { Agent, ValidationIssue, WorkspaceAccess } from '../../../src/runtime/agent.js';
import type { ChatMessage, ToolSpec } from '../../../src/providers/model-provider.js';
import type { AnyToolDefinition } from '../../../src/tools/tool.js';
import { contractValidator } from '../../../src/plugins/shared/contract-validator.js';
import { checkSchema, issuesText, jsonSchemaOf, parseSchema } from '../../../src/tools/schema.js';

export interface DriveResult {
  finalText: string;
  /** the error turn the procedure ended the run with, if it did */
  error?: { code: string; message: string };
  messages: ChatMessage[];
  toolCalls: Array<{ name: string; ok: boolean; content: string }>;
  issues: ValidationIssue[];
}

export async function driveOffline<I>(
  plugin: Agent<I>,
  input: unknown,
  workspace: WorkspaceAccess,
  opts: { goal?: string; maxIterations?: number; extraTools?: AnyToolDefinition[] } = {},
): Promise<DriveResult> {
  const parsed = parseSchema(plugin.inputSchema, input);
  const goal = opts.goal ?? plugin.defaultGoal;
  const tools = [...plugin.createTools({ runId: workspace.runId, input: parsed, goal, workspace, notice: () => {} }), ...(opts.extraTools ?? [])];
  const specs: ToolSpec[] = tools.map((t) => ({ name: t.name, description: t.description, inputSchema: jsonSchemaOf(t.parameters) }));
  const messages: ChatMessage[] = [{ role: 'user', content: goal }];
  const toolCalls: DriveResult['toolCalls'] = [];
  let finalText = '';
  let error: DriveResult['error'];
  for (let i = 0; i < (opts.maxIterations ?? 20); i++) {
    const turn = await plugin.offlineProcedure!({ system: plugin.promptFragments.join('\n'), messages, tools: specs });
    if (turn.error) {
      error = { code: turn.error.code, message: turn.error.message };
      break;
    }
    const calls = (turn.toolCalls ?? []).map((c, k) => ({ id: `call_${i}_${k}`, name: c.name, args: c.args }));
    messages.push({
      role: 'assistant',
      content: turn.text ?? '',
      ...(calls.length ? { toolCalls: calls } : {}),
      ...(turn.reasoning ? { reasoning: [{ text: turn.reasoning }] } : {}),
    });
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
        const a = checkSchema(tool.parameters, c.args);
        if (!a.ok) content = `invalid arguments: ${issuesText(a.issues)}`;
        else {
          const r = await tool.execute(a.value);
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
  return { finalText, ...(error ? { error } : {}), messages, toolCalls, issues };
}
