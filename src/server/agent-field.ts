/**
 * The agent a request names. The API's word is `agent` (as schedules say it); `plugin`, its older
 * name, is still read. Naming two different agents — by the two words, or by the body and the
 * query — is refused rather than one of them silently winning.
 */
import { invalidBody } from './http-error.js';

type Named = { value: string; where: string };

/** A place's value when it names an agent. */
export function named(v: unknown, where: string): Named | null {
  return typeof v === 'string' && v !== '' ? { value: v, where } : null;
}

/** The one agent among the places that may name it (null when none does). */
export function agentNamed(...places: Array<Named | null>): string | null {
  const given = places.filter((p): p is Named => p !== null);
  const other = given.find((p) => p.value !== given[0].value);
  if (other)
    throw invalidBody([
      { path: 'agent', message: `${given[0].where} ${JSON.stringify(given[0].value)} and ${other.where} ${JSON.stringify(other.value)} differ` },
    ]);
  return given[0]?.value ?? null;
}

/** A run request's body with its agent under the service's field (`plugin`), whichever word named it. */
export function runBodyWithAgent(body: Record<string, unknown>): Record<string, unknown> {
  const { agent, plugin, ...rest } = body;
  for (const [word, v] of [
    ['agent', agent],
    ['plugin', plugin],
  ] as const) {
    if (v !== undefined && (typeof v !== 'string' || v === '' || v.length > 100))
      throw invalidBody([{ path: word, message: `must be the name of an agent (1..100 characters), got ${JSON.stringify(v)?.slice(0, 40)}` }]);
  }
  const one = agentNamed(named(agent, 'agent'), named(plugin, 'plugin'));
  if (one === null) throw invalidBody([{ path: 'agent', message: 'required: the agent to run (GET /api/plugins lists them)' }]);
  return { ...rest, plugin: one };
}
