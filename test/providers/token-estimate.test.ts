import { describe, expect, it } from 'vitest';
import type { ChatMessage, ToolSpec } from '../../src/providers/model-provider.js';
import { estimateMessageTokens, estimateRequestTokens, estimateTokens } from '../../src/providers/token-estimate.js';

describe('token estimates', () => {
  it('counts ~4 ASCII characters a token and one per CJK character', () => {
    expect(estimateTokens('abcdefgh')).toBe(2);
    expect(estimateTokens('同步失败')).toBe(4);
  });

  it('a message changed in place is counted again (the count is kept only while it is unchanged)', () => {
    const m: ChatMessage = { role: 'assistant', content: 'short', toolCalls: [] };
    const first = estimateMessageTokens(m);
    expect(estimateMessageTokens(m)).toBe(first);
    m.content = 'a much longer answer than before, '.repeat(20);
    const longer = estimateMessageTokens(m);
    expect(longer).toBeGreaterThan(first + 100);
    m.toolCalls!.push({ id: 'c1', name: 'read_file', args: { path: 'x'.repeat(400) } });
    expect(estimateMessageTokens(m)).toBeGreaterThan(longer + 90);
  });

  it("a conversation's count follows its messages: appended ones are added, a replaced or spliced one is counted again", () => {
    const messages: ChatMessage[] = [{ role: 'user', content: 'goal' }];
    const req = { system: 'sys', messages, tools: [] };
    const each = () => estimateTokens('sys') + messages.reduce((n, m) => n + estimateMessageTokens(m), 0);
    expect(estimateRequestTokens(req)).toBe(each());
    messages.push({ role: 'assistant', content: '', toolCalls: [{ id: 'c1', name: 'read', args: { path: 'a'.repeat(200) } }] });
    messages.push({ role: 'tool', toolCallId: 'c1', toolName: 'read', content: 'b'.repeat(800), isError: false });
    const grown = estimateRequestTokens(req);
    expect(grown).toBe(each());
    expect(grown).toBeGreaterThan(250);
    // compaction: the earlier turns replaced by a short summary
    messages.splice(0, 3, { role: 'user', content: 'summary' });
    const compacted = estimateRequestTokens(req);
    expect(compacted).toBe(each());
    expect(compacted).toBeLessThan(20);
    // the same messages in another array count the same
    expect(estimateRequestTokens({ ...req, messages: [...messages] })).toBe(compacted);
    messages[0] = { role: 'user', content: 'x'.repeat(400) };
    expect(estimateRequestTokens(req)).toBe(each());
    messages.length = 0;
    expect(estimateRequestTokens(req)).toBe(estimateTokens('sys'));
  });

  it('a tool whose schema is replaced is counted again', () => {
    const tool: ToolSpec = { name: 't', description: 'd', inputSchema: { type: 'object' } };
    const req = { system: '', messages: [], tools: [tool] };
    const before = estimateRequestTokens(req);
    tool.inputSchema = { type: 'object', properties: { q: { type: 'string', description: 'y'.repeat(400) } } };
    expect(estimateRequestTokens(req)).toBeGreaterThan(before + 90);
  });
});
