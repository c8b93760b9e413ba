/**
 * Key points: the separate things a task asks for, each judged on its own. Those a rule can settle
 * (a required field present, a screenshot saved, the expected answer in the data, a workflow
 * post-condition) are settled here with zero tokens; the rest stay open for the judge model.
 */
import { z } from 'zod';
import type { Json } from '../store/ports.ts';
import type { JudgeInput, KeyPointVerdict } from './types.ts';

export type KeyPointKind = 'goal' | 'rubric' | 'field' | 'artifact' | 'answer' | 'schema' | 'postcondition';

export interface KeyPoint {
  kind: KeyPointKind;
  point: string;
}

/**
 * The goal's own parts: sentences, semicolon clauses and "… then …" sequences. "and" is left alone on
 * purpose: "salt and pepper" is one thing, and a wrong split would ask for half of it.
 */
export function goalParts(goal: string): string[] {
  return goal
    .split(/(?<=[.!?])\s+(?=[A-Z])|;|\n|,?\s+then\s+/i)
    .map((p) =>
      p
        .replace(/\s+/g, ' ')
        .replace(/[.;,\s]+$/, '')
        .replace(/^\s*(and\s+)?then\s+/i, '')
        .trim(),
    )
    .filter((p) => p.length >= 3);
}

export function keyPointsOf(
  task: JudgeInput['task'],
  postconditions: JudgeInput['postconditions'],
): KeyPoint[] {
  const points: KeyPoint[] = goalParts(task.goal).map((point) => ({ kind: 'goal', point }));
  for (const r of task.rubric ?? []) if (r.trim()) points.push({ kind: 'rubric', point: r.trim() });
  for (const f of task.requiredFields ?? []) points.push({ kind: 'field', point: `the data holds "${f}"` });
  for (const a of task.requiredArtifacts ?? [])
    points.push({ kind: 'artifact', point: `a screenshot labelled "${a}" was saved` });
  if (task.expectedAnswer) points.push({ kind: 'answer', point: `the answer is "${task.expectedAnswer}"` });
  if (task.schema) points.push({ kind: 'schema', point: 'the data has the shape the task asked for' });
  for (const p of postconditions ?? [])
    points.push({ kind: 'postcondition', point: `workflow step ${p.alias}: ${p.detail}` });
  return points;
}

const present = (v: Json | undefined): boolean =>
  v !== undefined &&
  v !== null &&
  !(typeof v === 'string' && v.trim() === '') &&
  !(Array.isArray(v) && v.length === 0);

/** Reads a dot path (`items.0.price`) out of the data. */
export function atPath(data: Json, path: string): Json | undefined {
  let cur: Json | undefined = data;
  for (const part of path.split('.')) {
    if (cur === null || typeof cur !== 'object') return undefined;
    cur = Array.isArray(cur) ? cur[Number(part)] : cur[part];
  }
  return cur;
}

const norm = (s: string) =>
  s
    .toLowerCase()
    .replace(/[^\p{L}\p{N}.]+/gu, ' ')
    .trim();

/**
 * Settles what a rule can settle; `undefined` leaves the point open for the model. An expected
 * answer found in the data is met; one not found stays open (it may be written another way).
 */
export function settleByRule(kp: KeyPoint, index: number, input: JudgeInput): KeyPointVerdict | undefined {
  const lastStep = input.steps.at(-1)?.step ?? 0;
  const rule = (met: boolean, why: string, evidenceStep = 0): KeyPointVerdict => ({
    point: kp.point,
    met,
    evidenceStep,
    why,
    decidedBy: 'rule',
  });
  switch (kp.kind) {
    case 'field': {
      const field = input.task.requiredFields?.[index] ?? '';
      return present(atPath(input.data, field))
        ? rule(true, `"${field}" is present in the final data`)
        : rule(false, `"${field}" is missing from the final data`, lastStep);
    }
    case 'artifact': {
      const label = input.task.requiredArtifacts?.[index] ?? '';
      const saved = input.screenshots.some(
        (s) => s.file.replace(/^\d+_/, '').replace(/\.png$/i, '') === label,
      );
      return saved
        ? rule(true, `screenshot "${label}" is in the evidence`)
        : rule(false, `no screenshot "${label}"`, lastStep);
    }
    case 'answer': {
      const expected = norm(input.task.expectedAnswer ?? '');
      return expected && norm(JSON.stringify(input.data)).includes(expected)
        ? rule(true, 'the expected answer appears in the final data')
        : undefined;
    }
    case 'schema': {
      try {
        const validator = z.fromJSONSchema(input.task.schema as Parameters<typeof z.fromJSONSchema>[0]);
        const parsed = validator.safeParse(input.data);
        return parsed.success
          ? rule(true, 'the data matches the schema')
          : rule(
              false,
              `the data does not match the schema (${parsed.error.issues[0]?.path.join('.') || 'root'}: ${parsed.error.issues[0]?.message})`,
              lastStep,
            );
      } catch {
        return undefined;
      }
    }
    case 'postcondition': {
      const p = input.postconditions?.[index];
      return p
        ? rule(p.ok, p.ok ? 'the post-condition held' : `the post-condition failed: ${p.detail}`)
        : undefined;
    }
    default:
      return undefined;
  }
}

/** Each key point with the index it has among the points of its own kind (rules look their input up by it). */
export function indexWithinKind(points: KeyPoint[]): number[] {
  const seen = new Map<KeyPointKind, number>();
  return points.map((p) => {
    const i = seen.get(p.kind) ?? 0;
    seen.set(p.kind, i + 1);
    return i;
  });
}
