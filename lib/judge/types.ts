/**
 * What the judge reads and what it rules. It sees a finished sample only through its stored evidence
 * (the task, the action log with the agent's own reflections, the final data, the screenshots): the
 * same things the agent saw, so it neither takes the agent's `done` on trust nor blames it for facts
 * no screenshot could show.
 */
import { z } from 'zod';
import type { Json } from '../store/ports.ts';

/** The task as the judge needs it (a run's spec, an agent call's goal). */
export interface JudgeTask {
  goal: string;
  requiredFields?: string[];
  requiredArtifacts?: string[];
  /** JSON Schema of the data (checked deterministically). */
  schema?: Record<string, unknown>;
  /** Extra criteria, one per line or item: each becomes a key point. */
  rubric?: string[];
  /** The answer the data must hold (compared without a model where it can be). */
  expectedAnswer?: string;
}

/** One step of the action log, as the agent wrote it (lib/agent StepRecord, read back from JSON). */
export interface JudgedStep {
  step: number;
  url: string;
  evaluation?: string;
  memory?: string;
  nextGoal?: string;
  actions: { tool: string; input: Json; ok: boolean; outcome: string }[];
  notices?: string[];
}

export interface JudgedScreenshot {
  /** Evidence file name (`03_cart.png`). */
  file: string;
  /** The step that saved it (0 when unknown). */
  step: number;
  png: Uint8Array;
}

export interface JudgeInput {
  task: JudgeTask;
  /** How the sample ended and why (the result record). */
  status: string;
  reason: string;
  data: Json;
  steps: JudgedStep[];
  screenshots: JudgedScreenshot[];
  /** Post-conditions a workflow checked, when the sample ran one. */
  postconditions?: { alias: string; ok: boolean; detail: string }[];
}

export const BLOCKERS = ['captcha', 'login', 'none'] as const;
export type Blocker = (typeof BLOCKERS)[number];

export interface KeyPointVerdict {
  point: string;
  /** null: the evidence cannot tell. */
  met: boolean | null;
  /** The step whose evidence decided it (0: the final data). */
  evidenceStep: number;
  /** Why, in one sentence. */
  why: string;
  /** `rule`: decided by a deterministic check; `model`: by the judge model. */
  decidedBy: 'rule' | 'model';
}

export interface Verdict {
  verdict: 'pass' | 'fail' | 'uncertain';
  reasoning: string;
  keyPoints: KeyPointVerdict[];
  /** The first step where the sample went wrong (undefined on a pass). */
  firstFailureStep?: number;
  impossibleTask: boolean;
  blockedBy: Blocker;
  /** Screenshots the model was shown (after relevance and near-duplicate selection). */
  screenshotsUsed: string[];
  usage: {
    promptTokens: number;
    completionTokens: number;
    cachedTokens: number;
    costUsd?: number;
    calls: number;
  };
}

/** The judge model's reply: one entry per open key point, by its number. */
export const JudgeReplySchema = z.object({
  keyPoints: z
    .array(
      z.object({
        index: z.number().int().min(1).describe('number of the key point as listed'),
        met: z.enum(['yes', 'no', 'unknown']).describe('unknown when the evidence shown cannot tell'),
        evidenceStep: z
          .number()
          .int()
          .min(0)
          .describe('step whose evidence decides it; 0 for the final data'),
        why: z.string().describe('one sentence'),
      }),
    )
    .describe('a verdict for every key point listed as open'),
  blockedBy: z.enum(BLOCKERS).describe('what stopped the agent, if anything'),
  impossibleTask: z.boolean().describe('true when the site cannot do what the task asks at all'),
  reasoning: z.string().describe('two or three sentences for the person reading the verdict'),
});
export type JudgeReply = z.infer<typeof JudgeReplySchema>;
