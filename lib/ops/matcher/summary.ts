/** How candidates and elements are shown in reasons, action descriptions and error messages. */
import type { Candidate, MatchElement } from './score.ts';

export interface CandidateSummary {
  id: number;
  role: string;
  name: string;
  score: number;
}

export const summary = (c: Candidate): CandidateSummary => ({
  id: c.element.id,
  role: c.element.role,
  name: c.element.name,
  score: c.score,
});

/** "closest: [3] button 'Sign up' (0.62), [5] link 'Sign in' (0.41)" for error messages. */
export function formatCandidates(candidates: readonly CandidateSummary[]): string {
  if (candidates.length === 0) return 'no element came close';
  return `closest: ${candidates
    .map((c) => `[${c.id}] ${c.role} '${short(c.name)}' (${c.score.toFixed(2)})`)
    .join(', ')}`;
}

const short = (s: string) => (s.length > 60 ? `${s.slice(0, 57)}…` : s);
export const shown = (el: MatchElement) =>
  `${el.role} '${short(el.name || el.label || el.placeholder || `#${el.id}`)}'`;
