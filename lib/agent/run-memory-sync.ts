/**
 * Run memory at a sample's edges: when it starts, the run's lines for its site are read and the best
 * few (ranked by its goal) kept in the state, so every slice and a resume show the same hints; when
 * it ends, what its log says worked and failed is added to the run's memory and written into its
 * evidence (memory.json, chained in the manifest like every other file). Zero tokens when the log
 * says enough; one small model call, counted like every other, only when it says nothing usable.
 */
import { z } from 'zod';
import { spentOn } from '../llm/spent.ts';
import { redactText } from '../perception/redact.ts';
import type { RunMemoryEntry, RunMemoryLine } from '../store/run-memory-ports.ts';
import { firstLine } from './errors.ts';
import { putJson } from './evidence.ts';
import type { SliceRuntime } from './finish.ts';
import { domainOf } from './memory.ts';
import { distillFromLog, rankHints } from './run-memory.ts';
import { addToUsage } from './usage.ts';

export const MEMORY_FILE = 'memory.json';

/** Looks up the run's hints once per sample (a failed read is logged and leaves none). */
export async function loadRunHints(rt: SliceRuntime): Promise<void> {
  const { state, deps } = rt;
  if (state.runHints !== undefined || !deps.runMemory) return;
  try {
    const entries = await deps.runMemory.list(state.tenant, state.runId);
    state.runHints = rankHints(entries, domainOf(state.startUrl), state.task.goal);
  } catch (err) {
    rt.log({ level: 'warn', msg: 'run memory could not be read; no hints', error: firstLine(err) });
    state.runHints = [];
  }
}

const DISTILL_SYSTEM =
  'You leave notes for the next browser agent that will do the same task on other pages of the same website. From the log of one attempt, write at most three short lines: how to get to the data, or what to avoid. Name controls by their role and visible name; never element numbers, never values typed or found.';

const DistillReply = z.object({
  lines: z
    .array(z.object({ kind: z.enum(['worked', 'failed']), text: z.string() }))
    .max(3)
    .describe('notes for the next attempt on this site'),
});

/** One small call (the summary model when there is one) when the log alone says nothing usable. */
async function askModel(rt: SliceRuntime): Promise<RunMemoryLine[]> {
  const { state, deps } = rt;
  const domain = domainOf(state.url) || domainOf(state.startUrl);
  const log = rt.steps
    .slice(-15)
    .map(
      (s) =>
        `step ${s.step} at ${s.url}: ${s.actions.map((a) => `${a.what ?? a.tool} → ${a.ok ? 'ok' : 'FAILED'}: ${a.outcome.slice(0, 100)}`).join(' ; ') || s.notices.join(' ; ')}`,
    )
    .join('\n');
  try {
    const res = await (deps.summaryLlm ?? deps.llm).generate({
      system: DISTILL_SYSTEM,
      messages: [
        {
          role: 'user',
          content: `Task: ${state.task.goal}\nEnded: ${state.status}: ${state.reason ?? ''}\nLog:\n${log}`,
        },
      ],
      schema: DistillReply,
      schemaName: 'run_memory',
      maxTokens: 300,
    });
    addToUsage(state, res.usage);
    return domain ? res.value.lines.map((l) => ({ domain, kind: l.kind, text: l.text })) : [];
  } catch (err) {
    const spent = spentOn(err);
    if (spent) addToUsage(state, spent);
    rt.log({
      level: 'warn',
      msg: 'run memory: the distilling call failed; nothing shared',
      error: firstLine(err),
    });
    return [];
  }
}

/** The model is asked only when the log is silent, the sample acted, and the model is not what failed. */
export function wantsModel(
  lines: readonly RunMemoryLine[],
  rt: Pick<SliceRuntime, 'state' | 'steps'>,
): boolean {
  const { state } = rt;
  return (
    lines.length === 0 &&
    rt.steps.some((s) => s.actions.length > 0) &&
    !state.retryable &&
    !(state.reason ?? '').startsWith('model error')
  );
}

/** At the sample's end (before its result is written, so a model call's tokens are in its usage). */
export async function shareWhatWasLearned(rt: SliceRuntime): Promise<void> {
  const { state, deps } = rt;
  if (!deps.runMemory || state.task.computerUse) return;
  let lines = distillFromLog(rt.steps);
  let source: RunMemoryEntry['source'] = 'log';
  if (wantsModel(lines, rt)) {
    lines = await askModel(rt);
    source = 'model';
  }
  // Typed values are left out when distilling; a secret a page echoed back must not travel either.
  lines = lines.map((l) => ({ ...l, text: redactText(l.text, deps.variables) }));
  const entry: RunMemoryEntry = {
    sampleId: state.sampleId,
    lines,
    source,
    writtenAt: new Date().toISOString(),
  };
  try {
    if (lines.length > 0) await deps.runMemory.append(state.tenant, state.runId, entry);
  } catch (err) {
    rt.log({ level: 'warn', msg: 'run memory could not be written', error: firstLine(err) });
  }
  await putJson(
    deps.evidence,
    state,
    MEMORY_FILE,
    { received: state.runHints ?? [], shared: lines, source },
    deps.variables,
  );
}
