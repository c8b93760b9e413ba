/**
 * Tokens a failed call had already spent. A provider bills a reply whether or not it fitted the
 * schema, so an error carries what was received before it (`usage`), and every caller that catches
 * one adds that to its totals: no path leaves tokens uncounted.
 */
import {
  addUsage,
  type LlmClient,
  type StructuredRequest,
  type StructuredResult,
  type Usage,
} from './types.ts';

const isUsage = (v: unknown): v is Usage =>
  typeof v === 'object' &&
  v !== null &&
  typeof (v as Usage).promptTokens === 'number' &&
  typeof (v as Usage).completionTokens === 'number';

/** What the failed call behind `err` spent, when it says (LlmError and OpError both carry `usage`). */
export function spentOn(err: unknown): Usage | undefined {
  if (!(err instanceof Error)) return undefined;
  const usage = (err as { usage?: unknown }).usage;
  return isUsage(usage) ? usage : undefined;
}

/** Adds `usage` to what `err` already says it spent, and gives `err` back (for `throw withSpent(…)`). */
export function withSpent<E>(err: E, usage: Usage | undefined): E {
  if (!usage || !(err instanceof Error)) return err;
  const before = spentOn(err);
  (err as { usage?: Usage }).usage = before ? addUsage(before, usage) : usage;
  return err;
}

/**
 * The client, telling `onUsage` about every call's tokens as they are spent: the replies of a call
 * that succeeded and those of one that failed. For live totals (a run's progress line, benchmarks).
 */
export function metered(llm: LlmClient, onUsage: (usage: Usage) => void): LlmClient {
  return {
    model: llm.model,
    async generate<T>(req: StructuredRequest<T>): Promise<StructuredResult<T>> {
      try {
        const res = await llm.generate(req);
        onUsage(res.usage);
        return res;
      } catch (err) {
        const spent = spentOn(err);
        if (spent) onUsage(spent);
        throw err;
      }
    },
  };
}
