/**
 * The agent the new-run form opens on: the project's own (an agent file of its .runtrail/, then one
 * of the user's or a package's), else the agent of the newest run here, else the first listed. The
 * builtin `chat` is only the default when nothing says more about what this project runs.
 */
export interface AgentChoice {
  name: string;
  source: { kind: string };
}

const RANK: Record<string, number> = { project: 0, user: 1, package: 2 };

export function mainAgent(agents: readonly AgentChoice[], newestRunAgent: string | null): string {
  const own = agents
    .map((a, i) => ({ a, i, rank: RANK[a.source.kind] ?? 9 }))
    .filter((x) => x.rank < 9)
    .sort((x, y) => x.rank - y.rank || x.i - y.i)[0];
  if (own) return own.a.name;
  if (newestRunAgent && agents.some((a) => a.name === newestRunAgent)) return newestRunAgent;
  return agents[0]?.name ?? '';
}
