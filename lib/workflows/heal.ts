/**
 * Writing heals back: a new version of the workflow in which each confirmed heal's step tries the
 * candidates that worked first and keeps the old ones after them (a site may A/B-test between
 * templates, and the old page may come back); a healed extractor replaces the old one (it is only
 * consulted when the current one finds nothing, so the model reads a page that went back once). A heal whose post-conditions did not hold is never
 * written: it may have found the wrong element. Pure.
 */
import type { LocatorCandidate, Workflow, WorkflowNode } from './schema.ts';
import type { HealRecord } from './types.ts';

/** The schema's cap on candidates per target. */
const MAX_CANDIDATES = 12;

const key = (c: LocatorCandidate) => JSON.stringify(c);

/** New candidates first, then the old ones not already among them, within the cap. */
export function mergeCandidates(fresh: LocatorCandidate[], old: LocatorCandidate[]): LocatorCandidate[] {
  const seen = new Set<string>();
  const out: LocatorCandidate[] = [];
  for (const c of [...fresh, ...old]) {
    if (seen.has(key(c))) continue;
    seen.add(key(c));
    out.push(c);
  }
  if (out.length <= MAX_CANDIDATES) return out;
  // Over the cap: keep every new one and the old ones most likely to come back (not positions).
  const kept = out.slice(0, fresh.length);
  const rest = out
    .slice(fresh.length)
    .sort((a, b) => Number(a.kind === 'xpath') - Number(b.kind === 'xpath'));
  return [...kept, ...rest].slice(0, MAX_CANDIDATES);
}

/** The node at a document path such as `nodes.3` or `nodes.2.config.nodes.0`, in `root`. */
function nodeAt(root: Workflow, path: string): WorkflowNode | undefined {
  let cur: unknown = root;
  for (const part of path.split('.')) {
    if (cur === null || typeof cur !== 'object') return undefined;
    cur = (cur as Record<string, unknown>)[part];
  }
  const node = cur as WorkflowNode | undefined;
  return node && typeof node === 'object' && 'alias' in node ? node : undefined;
}

/**
 * The next version with every confirmed heal applied, or undefined when there is nothing to write
 * (no heal confirmed). Heals are matched to their node by path and alias, so a record from another
 * document cannot change the wrong step.
 */
export function applyHeals(workflow: Workflow, heals: readonly HealRecord[]): Workflow | undefined {
  const next = structuredClone(workflow);
  let changed = false;
  for (const heal of heals) {
    if (!heal.confirmed) continue;
    const node = nodeAt(next, heal.path);
    if (heal.extractor) {
      // An extractor found again (checked against the model's reading of the healed page).
      if (
        !node ||
        node.alias !== heal.alias ||
        node.type !== 'browser_query' ||
        node.config.method !== 'extract'
      )
        continue;
      if (JSON.stringify(node.config.extractor) === JSON.stringify(heal.extractor)) continue;
      node.config.extractor = structuredClone(heal.extractor);
      changed = true;
      continue;
    }
    if (heal.new.length === 0) continue;
    if (!node || node.alias !== heal.alias || node.type !== 'browser_action' || !('target' in node.config))
      continue;
    const merged = mergeCandidates(heal.new, node.config.target.candidates);
    if (JSON.stringify(merged) === JSON.stringify(node.config.target.candidates)) continue;
    node.config.target.candidates = merged;
    changed = true;
  }
  if (!changed) return undefined;
  next.version = workflow.version + 1;
  // The extractors changed: the served-HTML check was of the old ones (static-read.ts checks again).
  if (next.staticRead?.verified)
    next.staticRead = {
      ...next.staticRead,
      verified: false,
      reason: 'healed: the new extractor is not checked against the served HTML yet',
    };
  return next;
}
