/**
 * Finding a pinned target's element again: candidates in order, each counting only when it hits
 * exactly one element that still looks like what was recorded. Acting on the wrong element is the
 * failure users never forgive, so anything unsure falls through to the heal, never to a guess.
 */
import type { Page } from 'playwright-core';
import { countByRole, type PageCandidate, resolveCandidate } from '../perception/candidates.ts';
import { snapshot } from '../perception/snapshot.ts';
import type { DurableLocator } from '../perception/types.ts';
import type { LocatorCandidate, PinnedTarget } from './schema.ts';

const norm = (s: string) =>
  s
    .toLowerCase()
    .replace(/[^\p{L}\p{N}]+/gu, ' ')
    .trim();

/** Roles a person would call the same kind of control. */
const ROLE_FAMILIES = [
  ['textbox', 'searchbox'],
  ['checkbox', 'switch', 'menuitemcheckbox'],
  ['radio', 'menuitemradio'],
];
const sameRole = (a: string, b: string) =>
  a === b || ROLE_FAMILIES.some((f) => f.includes(a) && f.includes(b));

/**
 * Loosely the same element: the same kind of control, and a name that is the recorded one, holds
 * it or is held by it as whole words ("Email" / "Email address"), or shares most of its words.
 */
export function looksLike(expect: PinnedTarget['expect'], seen: { role: string; name: string }): boolean {
  if (!expect) return true;
  if (!sameRole(expect.role, seen.role)) return false;
  const a = norm(expect.name);
  const b = norm(seen.name);
  if (a === b) return true;
  if (!a || !b) return false;
  if (` ${b} `.includes(` ${a} `) || ` ${a} `.includes(` ${b} `)) return true;
  const wa = new Set(a.split(' '));
  const wb = new Set(b.split(' '));
  const shared = [...wa].filter((w) => wb.has(w)).length;
  return shared / new Set([...wa, ...wb]).size >= 0.6;
}

export const describeCandidate = (c: LocatorCandidate): string =>
  c.kind === 'role'
    ? `role=${c.role}[name="${c.name}"]`
    : c.kind === 'text'
      ? `text=${c.tag ?? '*'}:"${c.text}"`
      : `${c.kind}=${c.value}`;

export interface CandidateTry {
  candidate: LocatorCandidate;
  /** Why it did not count (absent for the one that held). */
  why?: string;
}

export type TargetMatch =
  | { ok: true; locator: DurableLocator; index: number; tried: CandidateTry[] }
  | { ok: false; tried: CandidateTry[] };

/** Whether only a position (not the element's own attributes) picks the element out. */
const positional = (c: LocatorCandidate) => c.kind === 'xpath' || c.kind === 'text';

/**
 * Who the element may be: the recorded role and name, and every role + name candidate (a healed
 * target keeps the identity of each template it was seen on, so a site that A/B-tests between
 * them matches either).
 */
export function identities(target: PinnedTarget): { role: string; name: string }[] {
  const seen = target.candidates.flatMap((c) => (c.kind === 'role' ? [{ role: c.role, name: c.name }] : []));
  return target.expect ? [target.expect, ...seen] : [];
}

export async function matchTarget(page: Page, target: PinnedTarget): Promise<TargetMatch> {
  const tried: CandidateTry[] = [];
  const allowed = identities(target);
  let twins: number | undefined;
  for (const [index, candidate] of target.candidates.entries()) {
    const hit = await resolveCandidate(page, candidate as PageCandidate);
    if (hit.count === 0 || !hit.locator) {
      tried.push({ candidate, why: hit.count > 1 ? `matches ${hit.count} elements` : 'matches nothing' });
      continue;
    }
    let seen = { role: hit.locator.role, name: hit.locator.name };
    if (!seen.role && candidate.kind === 'xpath') {
      // Inside an iframe or shadow root: read role and name the way perception does.
      const snap = await snapshot(page, { text: false });
      const el = snap.elements.find((e) => e.locator.xpath === candidate.value);
      if (el) seen = { role: el.role, name: el.name };
    }
    if (allowed.length && !allowed.some((id) => looksLike(id, seen))) {
      tried.push({
        candidate,
        why: `hits ${seen.role || 'an element'} "${seen.name}", not what was recorded`,
      });
      continue;
    }
    if (positional(candidate) && seen.role) {
      // Two "Add to cart" buttons: a position or a text cannot say which one was meant.
      twins ??= await countByRole(page, seen.role, seen.name);
      if (twins > 1) {
        tried.push({ candidate, why: `${twins} elements look like it; a position cannot tell them apart` });
        continue;
      }
    }
    tried.push({ candidate });
    return { ok: true, locator: { ...hit.locator, ...seen }, index, tried };
  }
  return { ok: false, tried };
}
