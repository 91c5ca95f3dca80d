/** runtime/system_prompt.md: the sections the model is given, in a fixed order (so every turn starts with the same bytes). */
import type { ToolSpec } from '../../providers/model-provider.js';
import type { Agent } from '../agent.js';
import type { ResolvedRunCapabilities } from './run-capabilities.js';

export interface SystemPromptInput {
  plugin: Pick<Agent, 'name' | 'version' | 'description' | 'promptFragments' | 'instructions'>;
  goal: string;
  input: Record<string, unknown>;
  tools: ToolSpec[];
  capabilities: ResolvedRunCapabilities;
  skill: { name: string; version: string; instructions: string } | null;
  /** Agent Skills granted to the run: listed by name and description, read with load_skill. */
  grantedSkills?: Array<{ name: string; description: string }>;
}

export const SYSTEM_PROMPT_SECTIONS = [
  'Business Plugin',
  'Goal',
  'Business Guidance',
  'Run Input',
  'Available Tools',
  'Permission Boundaries',
  'Required Outputs',
  'Skill Instructions',
] as const;

export function buildSystemPrompt(p: SystemPromptInput): string {
  const caps = p.capabilities;
  const lines: string[] = [];
  const section = (title: string, body: string) => lines.push(`## ${title}`, '', body.trim() || '(none)', '');
  lines.push('You are an agent running inside Runtrail. Act only through the tools listed below and finish with a short final answer.', '');
  section('Business Plugin', `${p.plugin.name} ${p.plugin.version}: ${p.plugin.description}`);
  section('Goal', p.goal);
  // a Markdown agent's body is its guidance, after the plugin's fragments
  section('Business Guidance', [p.plugin.promptFragments.map((f) => `- ${f}`).join('\n'), p.plugin.instructions ?? ''].filter((t) => t.trim()).join('\n\n'));
  section('Run Input', ['```json', JSON.stringify(p.input, null, 2), '```'].join('\n'));
  section('Available Tools', p.tools.map((t) => `- \`${t.name}\`: ${t.description}`).join('\n'));
  section(
    'Permission Boundaries',
    [
      `- Read only under: ${caps.readRoots.map((r) => `\`${r}\``).join(', ')} (paths relative to the run folder).`,
      `- Write only under: ${caps.writeRoots.map((r) => `\`${r}/\``).join(', ')}.`,
      `- Only the tools above are allowed; other tool calls are refused.`,
    ].join('\n'),
  );
  section(
    'Required Outputs',
    caps.artifactContract
      .map((a) => {
        const extra = a.requiredHeadings?.length ? ` Headings: ${a.requiredHeadings.map((h) => `"${h}"`).join(', ')}.` : '';
        return `- \`artifacts/${a.path}\` (${a.type}${a.required ? ', required' : ', optional'}): ${a.description}.${extra}`;
      })
      .join('\n'),
  );
  const granted = p.grantedSkills ?? [];
  const skillText = [
    p.skill ? `Skill ${p.skill.name} ${p.skill.version}\n\n${p.skill.instructions}` : '',
    granted.length
      ? `Skills you can load with \`load_skill\` (load one before you follow it):\n${granted.map((g) => `- \`${g.name}\`: ${g.description}`).join('\n')}`
      : '',
  ].filter(Boolean);
  section('Skill Instructions', skillText.join('\n\n') || '(no skill)');
  return `${lines.join('\n').trimEnd()}\n`;
}
