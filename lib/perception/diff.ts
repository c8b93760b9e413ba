import type { Snapshot, SnapshotElement } from './types.ts';

export interface SnapshotDiff {
  /** Elements present now that were not in the previous snapshot (ids are stable per element). */
  added: SnapshotElement[];
  removed: SnapshotElement[];
  /** Only the new lines of the tree, in page order: what appeared (an opened menu, a toast). */
  tree: string;
  changed: boolean;
}

const idOf = (line: string): number | undefined => {
  const m = /^\s*\[(\d+)\]/.exec(line);
  return m ? Number(m[1]) : undefined;
};

/**
 * What is new since `prev`. Element ids live as long as their element, so "new id" means "new
 * element"; plain text lines are compared as a multiset so a repeated label still counts once.
 */
export function diffSnapshots(prev: Snapshot, next: Snapshot): SnapshotDiff {
  const before = new Set(prev.elements.map((e) => e.id));
  const after = new Set(next.elements.map((e) => e.id));
  const added = next.elements.filter((e) => !before.has(e.id));
  const removed = prev.elements.filter((e) => !after.has(e.id));
  const oldText = new Map<string, number>();
  for (const line of prev.tree.split('\n')) {
    if (idOf(line) === undefined) oldText.set(line.trim(), (oldText.get(line.trim()) ?? 0) + 1);
  }
  const fresh: string[] = [];
  for (const line of next.tree.split('\n')) {
    const id = idOf(line);
    if (id !== undefined) {
      if (!before.has(id)) fresh.push(line);
      continue;
    }
    const key = line.trim();
    const n = oldText.get(key) ?? 0;
    if (n > 0) oldText.set(key, n - 1);
    else if (key) fresh.push(line);
  }
  // Re-indent so the shallowest new line starts at column 0.
  const minIndent = Math.min(...fresh.map((l) => l.length - l.trimStart().length));
  const tree = fresh.map((l) => l.slice(Number.isFinite(minIndent) ? minIndent : 0)).join('\n');
  return { added, removed, tree, changed: added.length > 0 || removed.length > 0 || fresh.length > 0 };
}
