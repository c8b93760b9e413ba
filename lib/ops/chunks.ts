import { estimateTokens } from '../perception/tree.ts';

/**
 * Splits a tree into parts that each fit a token budget, at line boundaries. Each part starts
 * with the chain of container lines above its first line, so an item still knows its section.
 */
export function chunkTree(tree: string, budget: number): string[] {
  const lines = tree.split('\n');
  if (estimateTokens(tree) <= budget) return [tree];
  const indentOf = (l: string) => l.length - l.trimStart().length;
  const parts: string[] = [];
  let current: string[] = [];
  let used = 0;
  const ancestorsOf = (index: number): string[] => {
    const out: string[] = [];
    let want = indentOf(lines[index] ?? '');
    for (let j = index - 1; j >= 0 && want > 0; j--) {
      const ind = indentOf(lines[j]!);
      if (ind < want) {
        out.unshift(lines[j]!);
        want = ind;
      }
    }
    return out;
  };
  lines.forEach((line, i) => {
    const cost = estimateTokens(line) + 1;
    if (used + cost > budget && current.length > 0) {
      parts.push(current.join('\n'));
      current = ancestorsOf(i);
      used = current.reduce((n, l) => n + estimateTokens(l) + 1, 0);
    }
    current.push(line);
    used += cost;
  });
  if (current.length > 0) parts.push(current.join('\n'));
  return parts;
}
