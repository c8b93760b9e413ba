import { domConfidence, pageSignature, shortHash } from './metrics.ts';
import { phaseEnd, phaseStart } from './read-phases.ts';
import { redactSecrets } from './redact.ts';
import {
  assemble,
  estimateTokens,
  type FrameCollect,
  formatLine,
  type IdMapper,
  type Selection,
  selectBudget,
  selectChunk,
} from './tree.ts';
import type { Snapshot, SnapshotOptions } from './types.ts';

/** What shapes a snapshot besides the page: budget, chunk, keywords, and the secrets to mask. */
export interface BuildOptions extends SnapshotOptions {
  secrets?: Record<string, string>;
}

/**
 * The snapshot a model reads, from the reads of a page's frames: the outline assembled under one
 * id space (`idFor` maps each frame's own ids into it), each line formatted, the budget or chunk
 * applied, then the figures, hashes and secrets masking. Pure: the page is not touched, so the
 * same reads build the same snapshot.
 */
export function buildSnapshot(collected: FrameCollect[], idFor: IdMapper, options: BuildOptions): Snapshot {
  let t = phaseStart();
  const { lines, elements: allElements, lineElements } = assemble(collected, idFor);
  t = phaseEnd('assemble', t);
  const rendered = lines.map((l, i) => formatLine(l, lineElements[i]));
  t = phaseEnd('format', t);
  const mainRaw = collected[0]!.raw;

  let selection: Selection | undefined;
  let chunk: Snapshot['chunk'];
  if (options.chunk !== undefined) {
    const count = Math.max(1, Math.ceil(mainRaw.viewport.docHeight / mainRaw.viewport.height));
    const index = Math.min(Math.max(0, options.chunk), count - 1);
    selection = selectChunk(lines, index, mainRaw.viewport.height);
    chunk = { index, count };
  }
  if (options.budget !== undefined) {
    const base = selection?.keep;
    const inChunk = base ? lines.filter((_, i) => base[i]) : lines;
    const idx = base ? lines.map((_, i) => i).filter((i) => base[i]) : lines.map((_, i) => i);
    const remap = new Map(idx.map((orig, i) => [orig, i]));
    const sub = inChunk.map((l) => ({ ...l, parent: remap.get(l.parent) ?? -1 }));
    const budgeted = selectBudget(
      sub,
      idx.map((i) => rendered[i]!),
      options.budget,
      options.keywords,
    );
    const keep = new Array<boolean>(lines.length).fill(false);
    idx.forEach((orig, i) => {
      keep[orig] = budgeted.keep[i]!;
    });
    const omittedBefore = selection ? selection.omitted : 0;
    const omittedInteractiveBefore = selection ? selection.omittedInteractive : 0;
    selection = {
      keep,
      omitted: omittedBefore + budgeted.omitted,
      omittedInteractive: omittedInteractiveBefore + budgeted.omittedInteractive,
    };
  }

  let keptLines = rendered;
  let elements = allElements;
  if (selection) {
    const keep = selection.keep;
    keptLines = rendered.filter((_, i) => keep[i]);
    const keptIds = new Set<number>();
    lines.forEach((l, i) => {
      if (keep[i] && l.id) keptIds.add(l.id);
    });
    // Only what the model was shown is addressable: an id it could not have seen is a guess.
    elements = allElements.filter((e) => keptIds.has(e.id));
  }
  const complete = elements.length < allElements.length ? allElements : undefined;

  let omitted: string | undefined;
  if (selection && selection.omitted > 0) {
    const parts = [`${selection.omitted} lines left out`];
    if (selection.omittedInteractive > 0) parts.push(`${selection.omittedInteractive} of them interactive`);
    const how = chunk ? `chunk ${chunk.index + 1} of ${chunk.count}` : `token budget ${options.budget}`;
    omitted = `(${parts.join(', ')}: ${how}; scroll, pick another chunk, or narrow with a selector)`;
    keptLines.push(omitted);
  }
  const tree = keptLines.join('\n');
  t = phaseEnd('select', t);
  const urls: Record<string, string> = {};
  for (const e of elements) if (e.url) urls[String(e.id)] = e.url;
  const interactive = elements.filter((e) => e.interactive).length;

  const nodes = collected.reduce((n, c) => n + c.raw.counts.nodes, 0);
  const snap: Snapshot = {
    url: mainRaw.url,
    title: mainRaw.title,
    tree,
    elements,
    urls,
    frames: collected.map((c) => c.info),
    stats: {
      nodes,
      elements: elements.length,
      interactive,
      lines: keptLines.length,
      chars: tree.length,
      tokens: estimateTokens(tree),
      ms: 0,
      omittedLines: selection?.omitted ?? 0,
      omittedInteractive: selection?.omittedInteractive ?? 0,
    },
    signature: pageSignature(mainRaw.url, allElements),
    contentHash: shortHash(tree),
    confidence: domConfidence(
      collected.map((c) => c.raw),
      allElements.filter((e) => e.interactive).length,
    ),
  };
  if (chunk) snap.chunk = chunk;
  if (omitted) snap.omitted = omitted;
  if (complete) snap.complete = complete;
  redactSecrets(snap, options.secrets);
  if (options.secrets) {
    snap.contentHash = shortHash(snap.tree);
    snap.stats.chars = snap.tree.length;
    snap.stats.tokens = estimateTokens(snap.tree);
  }
  phaseEnd('finish', t);
  return snap;
}
