/**
 * Is `done` really done? Required fields present (0 and false count; null, undefined, '' and []
 * do not), required screenshots saved, and enough items when the task expects a number of them.
 */
import type { Json, JsonObject } from '../store/ports.ts';
import { countItems } from './merge.ts';
import type { AgentTask } from './state.ts';

export function requiredFieldsOf(task: AgentTask): string[] {
  if (task.requiredFields) return task.requiredFields;
  const req = task.schema?.required;
  return Array.isArray(req) ? req.filter((r): r is string => typeof r === 'string') : [];
}

/** The value at a dot path; through an array, the first item that has it. */
export function valueAt(data: Json | undefined, path: string): Json | undefined {
  let cur: Json | undefined = data;
  for (const part of path.split('.')) {
    if (Array.isArray(cur)) {
      const hit: Json | undefined = cur.map((item) => valueAt(item, part)).find((v) => isPresent(v));
      cur = hit;
    } else if (cur && typeof cur === 'object') cur = (cur as JsonObject)[part];
    else return undefined;
  }
  return cur;
}

export function isPresent(v: Json | undefined): boolean {
  if (v === undefined || v === null) return false;
  if (typeof v === 'string') return v.trim().length > 0;
  if (Array.isArray(v)) return v.length > 0;
  return true;
}

export interface DoneCheck {
  ok: boolean;
  missingFields: string[];
  missingArtifacts: string[];
  /** Scenario steps not marked achieved. */
  missingSteps?: string[];
  /** Items found vs expected, when the task names a number and fewer were found. */
  short?: { found: number; expected: number };
}

export function checkDone(
  task: AgentTask,
  data: JsonObject,
  artifacts: readonly string[],
  /** Scenario steps achieved so far (scenario mode). */
  stepsDone = 0,
): DoneCheck {
  const missingFields = requiredFieldsOf(task).filter((f) => !isPresent(valueAt(data, f)));
  const saved = new Set(artifacts.map((a) => a.toLowerCase()));
  const missingArtifacts = (task.requiredArtifacts ?? []).filter((a) => !saved.has(a.toLowerCase()));
  const missingSteps = (task.steps ?? []).slice(stepsDone);
  const out: DoneCheck = {
    ok: missingFields.length === 0 && missingArtifacts.length === 0 && missingSteps.length === 0,
    missingFields,
    missingArtifacts,
  };
  if (missingSteps.length) out.missingSteps = missingSteps;
  if (task.expectedItems !== undefined) {
    const found = countItems(data);
    if (found < task.expectedItems) out.short = { found, expected: task.expectedItems };
  }
  return out;
}

/** What the model is told when its `done` was bounced. */
export function bounceMessage(check: DoneCheck): string {
  const parts: string[] = [];
  if (check.missingFields.length) parts.push(`missing fields: ${check.missingFields.join(', ')}`);
  if (check.missingArtifacts.length)
    parts.push(`missing screenshots (take them with these labels): ${check.missingArtifacts.join(', ')}`);
  if (check.missingSteps?.length)
    parts.push(`scenario steps not achieved yet: ${check.missingSteps.join(' | ')}`);
  return `Your done was not accepted: ${parts.join('; ')}. Find them and call done again.`;
}
