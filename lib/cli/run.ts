/**
 * `browserfn run`: one task over many URLs on this machine, through the local state machine, with the
 * stores on local files under `--out` (default: the working directory): `.browserfn/runs/` for runs,
 * samples, checkpoints and results, `evidence/` for screenshots, logs, combined.csv and the manifest.
 */
import { readFile } from 'node:fs/promises';
import { mergePolicy, policyFromEnv } from '../browser/guard-policy.ts';
import { noModelError, resolveModelConfig } from '../llm/config.ts';
import { metered } from '../llm/spent.ts';
import type { Plan } from '../runs/planner.ts';
import {
  createRun,
  type ExecutionInput,
  GENERATED_SPEC,
  RunNotFound,
  resumeInput,
} from '../runs/run-records.ts';
import { type Sample, SamplesError, sampleFromUrl, samplesFromCsv } from '../runs/samples.ts';
import { parseTaskSpec, SpecError, type TaskSpec } from '../runs/task-spec.ts';
import { checkRunWorkflow, workflowNeedsModel } from '../runs/workflow-versions.ts';
import { evidenceKey } from '../store/keys.ts';
import type { WorkflowStore } from '../store/workflow-ports.ts';
import { type Flags, intFlag, parse, UsageError } from './args.ts';
import { CLI_TENANT, localStores } from './local-stores.ts';
import { ProgressTally, progressView } from './progress.ts';

export { CLI_TENANT, localStores };

async function readText(path: string, flag: string): Promise<string> {
  try {
    return await readFile(path, 'utf8');
  } catch {
    throw new UsageError(`${flag}: cannot read ${path}`);
  }
}

async function specFrom(flags: Flags, concurrency: number | undefined): Promise<TaskSpec> {
  const text = await readText(String(flags.task), '--task');
  let json: Record<string, unknown>;
  try {
    json = JSON.parse(text) as Record<string, unknown>;
  } catch (err) {
    throw new UsageError(`--task: ${flags.task} is not valid JSON (${(err as Error).message})`);
  }
  if (typeof flags.model === 'string') json.model = flags.model;
  if (concurrency) json.concurrency = concurrency;
  try {
    return parseTaskSpec(json);
  } catch (err) {
    if (err instanceof SpecError) throw new UsageError(`--task: ${err.message}`);
    throw err;
  }
}

async function samplesFrom(flags: Flags): Promise<Sample[]> {
  if (typeof flags.input === 'string' && typeof flags.url === 'string')
    throw new UsageError('give the samples once: --input samples.csv or --url URL, not both');
  try {
    if (typeof flags.input === 'string')
      return samplesFromCsv(await readText(flags.input, '--input'), flags.input);
    if (typeof flags.url === 'string') return sampleFromUrl(flags.url);
  } catch (err) {
    if (err instanceof SamplesError) throw new UsageError(err.message);
    throw err;
  }
  throw new UsageError('give the samples: --input samples.csv or --url URL');
}

/**
 * A run whose samples talk to a model refuses up front when none is configured: otherwise every sample
 * would crash on its first call while the bar counts them as pages done. A `computerUse` spec talks to
 * its own computer-use model, named in the spec, so it is let through.
 */
function refuseWithoutModel(spec: { model?: unknown; computerUse?: unknown }): void {
  if (spec.computerUse !== undefined) return;
  const model = typeof spec.model === 'string' ? spec.model : undefined;
  let config: ReturnType<typeof resolveModelConfig>;
  try {
    config = resolveModelConfig(model ? { model } : {});
  } catch (err) {
    throw new UsageError(`--model: ${(err as Error).message}`);
  }
  if (!config) throw new Error(`this run needs a model. ${noModelError().message}`);
}

/** The prompt turned into a spec and samples by the model; any failure is one line naming the cause. */
async function planFromPrompt(
  prompt: string,
  model: unknown,
  concurrency: number | undefined,
): Promise<Plan> {
  const name = typeof model === 'string' ? model : undefined;
  const [{ modelFor }, { planRun }] = await Promise.all([
    import('../api/run-op.ts'),
    import('../runs/planner.ts'),
  ]);
  const llm = await modelFor(name ? { model: name } : {}, { policy: policyFromEnv() });
  if (!llm) throw new Error(`planning a run from --prompt needs a model. ${noModelError().message}`);
  try {
    return await planRun(llm, prompt, {
      ...(name ? { model: name } : {}),
      ...(concurrency ? { concurrency } : {}),
    });
  } catch (err) {
    const first = ((err as Error).message ?? String(err)).split('\n')[0];
    throw new Error(`--prompt: the model could not plan a run (${first}); no run was created`);
  }
}

/**
 * A mode "workflow" spec: its stored workflow must exist (refused up front, one line), and it needs a
 * model only when the workflow has AI nodes or falls back to the agent; other modes always do.
 */
async function refuseUnrunnable(spec: TaskSpec, workflows: WorkflowStore): Promise<void> {
  if (spec.mode === 'workflow') {
    try {
      await checkRunWorkflow(workflows, CLI_TENANT, spec);
    } catch (err) {
      if (err instanceof SpecError) throw new UsageError(`--task: ${err.message}`);
      throw err;
    }
    if (!(await workflowNeedsModel(workflows, CLI_TENANT, spec))) return;
  }
  refuseWithoutModel(spec);
}

export async function runCommand(argv: string[], out: (s: string) => void): Promise<number> {
  const { flags } = parse(argv, {
    task: { type: 'string' },
    input: { type: 'string' },
    url: { type: 'string' },
    prompt: { type: 'string' },
    resume: { type: 'string' },
    concurrency: { type: 'string' },
    model: { type: 'string' },
    out: { type: 'string' },
  });
  const concurrency = intFlag(flags, 'concurrency');
  const { runStore, evidence, runMemory } = localStores(flags);
  // The store `browserfn workflow save` writes to: a run names its workflows by their ids there.
  // Loaded only for a workflow run (the AWS SDK behind it costs every other run a second to import).
  let workflows: WorkflowStore | undefined;
  const workflowStore = async () => {
    workflows ??= (await import('../store/config.ts')).storesFromEnv().workflows;
    return workflows;
  };
  let input: ExecutionInput;
  let hosts: string[] = [];
  let planned: Plan | undefined;
  if (typeof flags.resume === 'string') {
    const before = await runStore.getRun(CLI_TENANT, flags.resume).catch(() => undefined);
    if (before) {
      const resumed: Record<string, unknown> = {
        ...(before.spec as Record<string, unknown>),
        ...(typeof flags.model === 'string' ? { model: flags.model } : {}),
      };
      if (resumed.mode === 'workflow') await refuseUnrunnable(parseTaskSpec(resumed), await workflowStore());
      else refuseWithoutModel(resumed);
    }
    try {
      input = await resumeInput(
        runStore,
        evidence,
        CLI_TENANT,
        flags.resume,
        concurrency ? { concurrency } : {},
      );
    } catch (err) {
      if (err instanceof RunNotFound)
        throw new UsageError(`--resume: ${err.message} under ${localStores(flags).base}`);
      throw err;
    }
    hosts = (await runStore.listSamples(CLI_TENANT, flags.resume)).map((s) => new URL(s.url).host);
  } else if (typeof flags.prompt === 'string') {
    if (!flags.prompt.trim()) throw new UsageError('--prompt is empty');
    // The planner turns the prompt into a spec with a model call, and the samples need one after it.
    refuseWithoutModel(typeof flags.model === 'string' ? { model: flags.model } : {});
    // Planned here, before any run exists: a model that fails or answers nonsense is one plain error
    // line, and no empty run is left behind.
    const plan = await planFromPrompt(flags.prompt, flags.model, concurrency);
    input = await createRun(runStore, evidence, {
      tenant: CLI_TENANT,
      spec: plan.spec,
      samples: plan.samples,
    });
    const { manifestedEvidence } = await import('../runs/manifested-evidence.ts');
    await manifestedEvidence(evidence, CLI_TENANT, input.runId).put(
      evidenceKey(CLI_TENANT, input.runId, GENERATED_SPEC),
      JSON.stringify(
        { prompt: plan.prompt, spec: plan.spec, samples: plan.samples, usage: plan.usage },
        null,
        2,
      ),
      'application/json',
    );
    planned = plan;
  } else {
    if (typeof flags.task !== 'string')
      throw new UsageError('give --task spec.json, --prompt "…" or --resume RUN_ID');
    const spec = await specFrom(flags, concurrency);
    if (spec.mode === 'workflow') await refuseUnrunnable(spec, await workflowStore());
    else refuseWithoutModel(spec);
    // A spec with a discovery block finds its own samples (the Discover state) unless some are given.
    const discovering = spec.discovery !== undefined && flags.input === undefined && flags.url === undefined;
    const samples = discovering ? [] : await samplesFrom(flags);
    hosts = discovering
      ? spec.discovery!.listings.map((u) => new URL(u).host)
      : samples.map((s) => new URL(s.url).host);
    input = await createRun(runStore, evidence, { tenant: CLI_TENANT, spec, samples });
  }
  // The operator named these URLs: their hosts may be loaded (redirects elsewhere are still checked).
  const policy = mergePolicy(policyFromEnv(), { allowHosts: [...new Set(hosts)] });
  const samples = await runStore.listSamples(CLI_TENANT, input.runId);
  const earlier = await runStore.listResults(CLI_TENANT, input.runId);
  const finished = earlier.length;
  out(
    `run ${input.runId} started: ${samples.length} samples${finished ? `, ${finished} already finished` : ''}`,
  );
  const tally = new ProgressTally(samples.length, finished, Date.now(), true);
  // After a resume the line shows the run's totals: what the samples finished before spent counts too.
  for (const r of earlier)
    tally.carry({
      tokens: Number(r.usage.promptTokens ?? 0) + Number(r.usage.completionTokens ?? 0),
      costUsd: r.usage.costUsd === undefined ? undefined : Number(r.usage.costUsd),
    });
  if (planned) tally.spend(planned.usage);
  // The run machinery, the browser and the model SDKs load once the run is created: a usage error
  // or a refusal above answers without them.
  const [{ runHandlers }, { agentSliceRunner }, { startLocalRun }, { sharedBrowser }, { modelFor }] =
    await Promise.all([
      import('../runs/handlers.ts'),
      import('../runs/agent-slice-binding.ts'),
      import('../runs/local-runner.ts'),
      import('../browser/session.ts'),
      import('../api/run-op.ts'),
    ]);
  const view = progressView(process.stderr, tally, (s) => out(s));
  const handlers = runHandlers({
    runStore,
    evidence,
    runMemory,
    slices: agentSliceRunner,
    ...(workflows ? { workflows } : {}),
    browser: sharedBrowser,
    policy,
    allowAuthFiles: true,
    // Every model call's tokens reach the progress line as it returns, failed ones included.
    llmFor: async (model) => {
      const llm = await modelFor(model ? { model } : {}, { policy });
      return llm && metered(llm, (u) => tally.spend(u));
    },
    onSliceStart: (id) => tally.start(id),
    onSlice: (e) => {
      if (!e.final) return;
      void runStore.getResult(CLI_TENANT, input.runId, e.sampleId).then((r) => {
        const finishedSample = {
          sampleId: e.sampleId,
          status: e.status,
          tokens: Number(r?.usage.promptTokens ?? 0) + Number(r?.usage.completionTokens ?? 0),
          costUsd: r?.usage.costUsd === undefined ? undefined : Number(r.usage.costUsd),
          ...(r?.reason ? { reason: r.reason } : {}),
        };
        tally.finish(finishedSample);
        view.update(tally, finishedSample);
      });
    },
  });
  await runStore.updateRun(CLI_TENANT, input.runId, { status: 'running' });
  const execution = startLocalRun(input, handlers);
  const stop = () => {
    view.stop();
    out(
      `interrupted: resume with  browserfn run --resume ${input.runId}${flags.out ? ` --out ${flags.out}` : ''}`,
    );
    execution.abort();
    process.exit(130);
  };
  process.once('SIGINT', stop);
  try {
    await execution.result;
  } finally {
    process.off('SIGINT', stop);
    view.stop();
  }
  const run = await runStore.getRun(CLI_TENANT, input.runId);
  const counts = (run?.totals?.counts ?? {}) as Record<string, number>;
  out(
    `run ${input.runId} ${run?.status}: ${Object.entries(counts)
      .filter(([, n]) => n > 0)
      .map(([k, n]) => `${n} ${k}`)
      .join(', ')}`,
  );
  out(`spent: ${tally.tokens} tokens, cost ${tally.cost()}`);
  out(`combined.csv: ${evidence.pathOf(evidenceKey(CLI_TENANT, input.runId, 'combined.csv'))}`);
  // Kept outside both stores, the head lets `verify --head` catch even a rewritten manifest and run record.
  if (run?.manifestHead)
    out(
      `chain head: ${run.manifestHead}  (keep it; check later with: browserfn verify ${input.runId} --head <it>)`,
    );
  if (planned) out(`planned spec: ${evidence.pathOf(evidenceKey(CLI_TENANT, input.runId, GENERATED_SPEC))}`);
  const bad =
    (counts.failed ?? 0) + (counts.needs_review ?? 0) + (counts.pending ?? 0) + (counts.running ?? 0);
  return run?.status === 'done' && bad === 0 ? 0 : 1;
}
