/**
 * Role-only targets: "click the button", "focus the textbox", "click the second tab". No words
 * name the element, so only the role and the count can: exactly one usable element of that role
 * is the one; an ordinal counts usable elements of that role in reading order; anything else
 * defers. Role words are hard here too: "the button" never means a link.
 */
import type { SnapshotElement } from '../../../perception/types.ts';
import type { MatchVerb, RoleHint } from '../parse.ts';
import { hintFactor, verbAllows } from '../score.ts';

export type RolePick = { ok: true; el: SnapshotElement; why: string } | { ok: false; reason: string };

/** Usable by a person now or after a scroll: enabled and not concealed. */
const usable = (el: SnapshotElement): boolean =>
  el.interactive && !el.states.disabled && el.facts?.concealed !== true;

const ORDINAL_WORDS = [
  'first',
  'second',
  'third',
  'fourth',
  'fifth',
  'sixth',
  'seventh',
  'eighth',
  'ninth',
  'tenth',
];
const nth = (n: number) => (n === -1 ? 'last' : (ORDINAL_WORDS[n - 1] ?? `#${n}`));

export function pickByRole(
  hint: RoleHint,
  ordinal: number | undefined,
  elements: readonly SnapshotElement[],
  verb: MatchVerb,
): RolePick {
  // Elements come in reading order (frames included), which is what "the second" counts in.
  const all = elements.filter((el) => el.interactive && hintFactor(hint, el) === 1 && verbAllows(verb, el));
  const live = all.filter(usable);
  if (ordinal === undefined) {
    if (live.length === 1) return { ok: true, el: live[0]!, why: `the only usable ${hint} on the page` };
    return {
      ok: false,
      reason:
        live.length === 0 ? `no usable ${hint} on the page` : `${live.length} usable ${hint}s: say which one`,
    };
  }
  const el = ordinal === -1 ? live[live.length - 1] : live[ordinal - 1];
  if (!el) return { ok: false, reason: `there are only ${live.length} usable ${hint}s` };
  return { ok: true, el, why: `the ${nth(ordinal)} of ${live.length} usable ${hint}s in reading order` };
}
