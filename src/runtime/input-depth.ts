/**
 * How deep a run's request may nest. Everything a run writes about its request (input/request.json,
 * the prompt, its events) is JSON, and JSON.stringify recurses: a 5,000-level input threw while the
 * run's files were being written, after the run existed. The request is refused before that instead,
 * naming where it is too deep. The walk is iterative, so any depth is measured.
 */

/** Levels of nesting a request's values may have (`{"a":{"b":1}}` is 2). */
export const MAX_INPUT_DEPTH = 64;

interface Node {
  value: unknown;
  depth: number;
  key: string;
  parent: Node | null;
}

function pathOf(n: Node): string[] {
  const keys: string[] = [];
  for (let at: Node | null = n; at; at = at.parent) keys.push(at.key);
  return keys.reverse();
}

/** The first path (e.g. `input.a.a.a.…`) nested deeper than `max` levels, or null when none is. */
export function tooDeepPath(value: unknown, max = MAX_INPUT_DEPTH, root = ''): string | null {
  const stack: Node[] = [{ value, depth: 0, key: root, parent: null }];
  while (stack.length) {
    const n = stack.pop()!;
    const v = n.value;
    if (v === null || typeof v !== 'object') continue;
    // the root container is level 1: `{"a":{"b":1}}` (depth 0 and 1 here) is 2 levels
    if (n.depth >= max) {
      const keys = pathOf(n).filter(Boolean);
      return keys.length > 8 ? `${keys.slice(0, 6).join('.')}.….${keys[keys.length - 1]}` : keys.join('.');
    }
    const entries: Array<[string, unknown]> = Array.isArray(v) ? v.map((x, i) => [String(i), x]) : Object.entries(v);
    for (const [key, child] of entries) stack.push({ value: child, depth: n.depth + 1, key, parent: n });
  }
  return null;
}
