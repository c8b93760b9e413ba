/**
 * Picks the element a named target means among the scored candidates: the clear best, or the one
 * an ordinal counts to among equally good look-alikes.
 */
import type { Snapshot } from '../../perception/types.ts';
import type { ParsedInstruction, TargetPhrase } from './parse.ts';
import { type Candidate, sameLook, scoreCandidates } from './score.ts';
import { shown } from './summary.ts';

const EXACT = 0.95;
const EPS = 1e-9;

type Pick = { ok: true; cand: Candidate; margin: number; why?: string } | { ok: false; reason: string };

/** No ordinal: the best must clear the threshold, have no look-alike, and lead by the margin. */
function pickPlain(ranked: Candidate[], threshold: number, need: number): Pick {
  const best = ranked[0];
  if (!best) return { ok: false, reason: 'no element fits' };
  if (best.score < threshold)
    return { ok: false, reason: `best candidate scores ${best.score.toFixed(2)} < ${threshold}` };
  // Look-alikes the text could not separate (a context qualifier can): disabled or off-screen
  // twins count too, since the instruction does not say which one it means.
  const twins = ranked.filter(
    (c) => c !== best && sameLook(c.element, best.element) && best.base - c.base < need,
  ).length;
  if (twins > 0)
    return {
      ok: false,
      reason: `${twins + 1} elements look the same (${shown(best.element)}); say which one, e.g. "the second …"`,
    };
  const second = ranked[1];
  const margin = second ? best.score - second.score : best.score;
  if (margin < need)
    return { ok: false, reason: `too close to call: ${shown(best.element)} vs ${shown(second!.element)}` };
  return { ok: true, cand: best, margin };
}

/** Counting is only sound over the whole page: a budgeted or chunked snapshot left elements out. */
function countable(snapshot: Snapshot): string | undefined {
  if (snapshot.chunk) return 'an ordinal counts over the whole page, and this snapshot is one chunk';
  if (snapshot.stats.omittedInteractive > 0)
    return 'an ordinal counts over the whole page, and this snapshot left interactive elements out';
  return undefined;
}

/** With an ordinal: it picks among the equally-scored best group, in document order. */
function pickOrdinal(ranked: Candidate[], ordinal: number, threshold: number, need: number): Pick {
  let top = 0;
  for (const c of ranked) if (c.base > top) top = c.base;
  if (top < threshold) return { ok: false, reason: `best candidate scores ${top.toFixed(2)} < ${threshold}` };
  const group = ranked.filter((c) => c.base >= top - EPS).sort((a, b) => a.element.id - b.element.id);
  let rest = 0;
  for (const c of ranked) if (c.base < top - EPS && c.base > rest) rest = c.base;
  // Something nearly as good outside the group makes the count itself doubtful.
  if (top - rest < need) return { ok: false, reason: 'too close to call which elements count' };
  const chosen = ordinal === -1 ? group[group.length - 1] : group[ordinal - 1];
  if (!chosen) return { ok: false, reason: `there are only ${group.length} matching elements` };
  if (chosen.element.states.disabled) return { ok: false, reason: `${shown(chosen.element)} is disabled` };
  return { ok: true, cand: chosen, margin: top - rest };
}

interface Resolved {
  pick: Pick;
  ranked: Candidate[];
}

export function resolveTarget(
  parsed: ParsedInstruction,
  target: TargetPhrase,
  snapshot: Snapshot,
  threshold: number,
  need: number,
): Resolved {
  const verb = parsed.verb;
  // Targets with a kind and no words ("the button", "the second tab") were counted earlier by
  // resolveRoleOnly (generic.ts); here the element is always named.
  if (target.ordinal === undefined) {
    const ranked = scoreCandidates(target, snapshot.elements, verb);
    return { pick: pickPlain(ranked, threshold, need), ranked };
  }
  if (!target.phrase) return { pick: { ok: false, reason: 'no words name the element' }, ranked: [] };
  const cannotCount = countable(snapshot);
  const ranked = scoreCandidates(target, snapshot.elements, verb);
  if (target.literal) {
    // "first aid kit" may be a name, not a count: an exact literal reading wins, unless the
    // counted reading is exact too.
    const { ordinal: _o, literal, full: _f, ...rest } = target;
    const lit = scoreCandidates({ ...rest, phrase: literal }, snapshot.elements, verb);
    const litBest = lit[0];
    const inGroup = (c: Candidate) => ranked.some((r) => r.element === c.element && r.base >= EXACT);
    if (litBest && litBest.base >= EXACT) {
      if (ranked.some((r) => r.base >= EXACT && r.element !== litBest.element))
        return {
          pick: { ok: false, reason: `"${literal}" reads both as a name and as a count` },
          ranked: lit,
        };
      return { pick: pickPlain(lit, threshold, need), ranked: lit };
    }
    if (litBest && litBest.score >= threshold && !inGroup(litBest))
      return {
        pick: { ok: false, reason: `"${literal}" reads both as a name and as a count` },
        ranked,
      };
  }
  if (cannotCount) return { pick: { ok: false, reason: cannotCount }, ranked };
  return { pick: pickOrdinal(ranked, target.ordinal, threshold, need), ranked };
}
