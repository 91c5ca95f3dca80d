/**
 * The records a run writes as it starts, before its first model turn: which skill it activated and
 * why (skill_activation.json), the capabilities, model and limits it resolved to, never a key
 * (resolved_config.json), and the plan its plugin gives it (agent_plan.json).
 */
import { describeProvider } from '../../providers/resolve-model-provider.js';
import { modelInfo } from '../../providers/model-catalog.js';
import { describeSandbox } from '../../sandbox/sandbox-description.js';
import type { RunRecord } from './run-record.js';

export function skillActivationRecord(rec: RunRecord): Record<string, unknown> {
  const skill = rec.skill;
  return {
    run_id: rec.runId,
    skill: skill ? skill.manifest.name : null,
    version: skill ? skill.manifest.version : null,
    reason: skill ? (rec.request.skill ? 'requested' : `default skill of plugin ${rec.plugin.name}`) : 'no skill',
    compatible_plugins: skill?.manifest.compatible_plugins ?? [],
    required_tools: skill?.manifest.required_tools ?? [],
    required_inputs: skill?.manifest.required_inputs ?? [],
    output_artifacts: skill?.manifest.output_artifacts ?? [],
    read_scopes: skill?.manifest.read_scopes ?? null,
    write_scopes: skill?.manifest.write_scopes ?? null,
    granted_skills: rec.grantedSkills.map((g) => ({ name: g.manifest.name, version: g.manifest.version, format: g.format })),
    activated_at: new Date().toISOString(),
  };
}

export function resolvedConfigRecord(rec: RunRecord): Record<string, unknown> {
  return {
    run_id: rec.runId,
    capabilities: rec.capabilities,
    model: describeProvider(rec.provider),
    // what the catalog knows: the window and output limit the context check uses, the prices
    model_info: modelInfo(rec.provider.provider, rec.provider.model),
    reasoning: rec.reasoning ?? 'off',
    limits: rec.limits,
    capture: rec.capture,
    sandbox: describeSandbox(rec.sandbox),
    conversation_id: rec.conversationId,
    declared_tools: rec.tools.map((t) => t.name),
    ...(rec.toolSources?.length ? { tool_sources: rec.toolSources.map((s) => s.describe()) } : {}),
  };
}

export function agentPlanRecord(rec: RunRecord): Record<string, unknown> {
  return {
    run_id: rec.runId,
    plugin: rec.plugin.name,
    goal: rec.goal,
    steps: rec.plugin.plan.map((s, i) => ({ n: i + 1, ...s })),
  };
}
