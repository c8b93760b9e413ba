/** `browserfn judge <run-id> [--sample ID]`: the judge's verdict on a run's samples, from their evidence. */
import { policyFromEnv } from '../browser/guard-policy.ts';
import { resolveModelConfig } from '../llm/config.ts';
import { JudgeRunError, judgeRun } from '../runs/judge-run.ts';
import { parse, UsageError } from './args.ts';
import { CLI_TENANT, localStores } from './local-stores.ts';

export async function judgeCommand(argv: string[], out: (s: string) => void): Promise<number> {
  const { flags, positionals } = parse(argv, {
    sample: { type: 'string' },
    model: { type: 'string' },
    out: { type: 'string' },
  });
  const runId = positionals[0];
  if (!runId) throw new UsageError('missing <run-id>');
  const { runStore, evidence, base } = localStores(flags);
  // Without a model the rules still decide what they can; the rest reads "uncertain". The judge reads
  // evidence only: the model SDKs (and the browser code beside them in run-op) load only for a model.
  const choice = typeof flags.model === 'string' ? { model: flags.model } : {};
  let configured = true;
  try {
    configured = resolveModelConfig(choice) !== undefined;
  } catch {
    // modelFor says what is wrong with it, as before.
  }
  const llm = configured
    ? await (await import('../api/run-op.ts')).modelFor(choice, { policy: policyFromEnv() })
    : undefined;
  let judged: Awaited<ReturnType<typeof judgeRun>>;
  try {
    judged = await judgeRun({ runStore, evidence, llm }, CLI_TENANT, runId, {
      ...(typeof flags.sample === 'string' ? { sampleId: flags.sample } : {}),
    });
  } catch (err) {
    if (err instanceof JudgeRunError && err.kind === 'not_found')
      throw new UsageError(`${err.message} under ${base}`);
    throw err;
  }
  for (const { sampleId, verdict } of judged) {
    const failing = verdict.firstFailureStep ? ` (first failing step ${verdict.firstFailureStep})` : '';
    const blocked = verdict.blockedBy !== 'none' ? ` [blocked by ${verdict.blockedBy}]` : '';
    out(`${sampleId}: ${verdict.verdict}${blocked}${failing} — ${verdict.reasoning}`);
  }
  const counts = judged.reduce<Record<string, number>>((c, j) => {
    c[j.verdict.verdict] = (c[j.verdict.verdict] ?? 0) + 1;
    return c;
  }, {});
  out(
    `judged ${judged.length}: ${
      Object.entries(counts)
        .map(([k, n]) => `${n} ${k}`)
        .join(', ') || 'nothing finished yet'
    }`,
  );
  return judged.every((j) => j.verdict.verdict === 'pass') ? 0 : 1;
}
