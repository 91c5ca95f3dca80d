import { describe, expect, it } from 'vitest';
import { currentGoal, failures, lastOk, toolResults } from '../../src/plugins/shared/conversation.js';
import type { ChatMessage } from '../../src/providers/model-provider.js';

describe('conversation helpers (offline procedures read the loop back)', () => {
  const messages: ChatMessage[] = [
    { role: 'user', content: 'earlier goal' },
    { role: 'assistant', content: 'earlier answer' },
    { role: 'user', content: 'find the top problems' },
    { role: 'user', content: '[notice] background job finished' },
    {
      role: 'assistant',
      content: '',
      toolCalls: [
        { id: 'a', name: 'write_json_artifact', args: { path: 'x.json' } },
        { id: 'b', name: 'list_artifacts', args: {} },
      ],
    },
    { role: 'tool', toolCallId: 'a', toolName: 'write_json_artifact', content: '{"ok":false,"error":"bad"}', isError: true },
    { role: 'tool', toolCallId: 'b', toolName: 'list_artifacts', content: 'plain text, not JSON', isError: false },
    { role: 'user', content: 'repair: fix it' },
  ];
  it('takes the goal of the current run, not history or notices', () => {
    expect(currentGoal(messages)).toBe('find the top problems');
  });
  it('pairs tool results with their call arguments and parses JSON content', () => {
    const r = toolResults(messages);
    expect(r.map((x) => [x.name, x.ok, x.args])).toEqual([
      ['write_json_artifact', false, { path: 'x.json' }],
      ['list_artifacts', true, {}],
    ]);
    expect(r[0].data).toEqual({ ok: false, error: 'bad' });
    expect(r[1].data).toBeNull();
    expect(lastOk(r, 'list_artifacts')?.content).toBe('plain text, not JSON');
    expect(failures(r, 'write_json_artifact', (a) => (a as { path: string }).path === 'x.json')).toHaveLength(1);
  });
});
