import { readFile } from 'node:fs/promises';
import type { AgentDeps } from '../agent/deps.ts';
import { type AgentTask, AgentTaskSchema, isFinal, type StepRecord } from '../agent/state.ts';
import { assertNavigable } from '../browser/guard.ts';
import { forCommandLine, noModelError } from '../llm/config.ts';
import { sampleFromUrl } from '../runs/samples.ts';
import { parseTaskSpec, SpecError } from '../runs/task-spec.ts';
import type { SampleStatus } from '../store/ports.ts';
import { intFlag, parse, UsageError, varFlags } from './args.ts';
import { CLI_TENANT, localStores } from './local-stores.ts';
import { policyForCli } from './open.ts';
import { pageArg } from './page-arg.ts';

export const AGENT_USAGE =
  'browserfn agent <url> "<goal>" [--schema f.json] [--max-steps N] [--out DIR] [--model provider/model] [--var name=value]… [--require field]… [--step "scenario step"]… [--cua]';

const OPTIONS = {
  schema: { type: 'string' },
  'max-steps': { type: 'string' },
  out: { type: 'string' },
  model: { type: 'string' },
  var: { type: 'string', multiple: true },
  require: { type: 'string', multiple: true },
  step: { type: 'string', multiple: true },
  cua: { type: 'boolean' },
} as const;

async function readSchema(path: string): Promise<Record<string, unknown>> {
  let text: string;
  try {
    text = await readFile(path, 'utf8');
  } catch {
    throw new UsageError(`--schema: cannot read ${path}`);
  }
  try {
    const parsed = JSON.parse(text) as unknown;
    if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed))
      throw new Error('not an object');
    return parsed as Record<string, unknown>;
  } catch (err) {
    throw new UsageError(`--schema: ${path} is not a JSON Schema object (${(err as Error).message})`);
  }
}

/** `--cua`: the computer-use model from `--model` or BROWSERFN_MODEL, one of the three providers that have one. */
function computerUseModel(flag: unknown): string {
  const name = typeof flag === 'string' ? flag : process.env.BROWSERFN_MODEL;
  if (!name)
    throw new UsageError(
      '--cua needs a computer-use model: --model anthropic/claude-sonnet-4 (or openai/computer-use-preview, google/gemini-2.5-computer-use-preview-10-2025) or BROWSERFN_MODEL',
    );
  if (!/^(anthropic|openai|google)\/.+/.test(name))
    throw new UsageError(`--cua: "${name}" is not a computer-use model (anthropic/…, openai/…, google/…)`);
  return name;
}

/** One step as a person follows it: the thought, then each action with its outcome. */
export function formatStep(s: StepRecord): string {
  const lines = [`step ${s.step}  ${s.url}`];
  const thought = [s.evaluation, s.nextGoal].filter(Boolean).join(' → ');
  if (thought) lines.push(`  thought: ${thought}`);
  for (const a of s.actions) {
    const { tool: _tool, ...args } = a.input as Record<string, unknown>;
    lines.push(`  ${a.ok ? '✓' : '✗'} ${a.tool} ${JSON.stringify(args)} → ${a.outcome.slice(0, 300)}`);
  }
  for (const n of s.notices) lines.push(`  ! ${n.slice(0, 200)}`);
  lines.push(`  ${s.tokens.prompt} prompt tokens (${s.tokens.cached} cached), ${s.ms} ms`);
  return lines.join('\n');
}

export async function agentCommand(argv: string[], out: (s: string) => void): Promise<number> {
  const { flags, positionals } = parse(argv, OPTIONS);
  const page = pageArg(positionals[0]);
  if (page.file)
    throw new UsageError(
      '<url>: the agent takes an http(s) URL (local files work with snapshot, act, observe, extract)',
    );
  const url = page.url;
  const goal = positionals[1];
  if (!goal?.trim()) throw new UsageError('missing "<goal>"');
  const maxSteps = intFlag(flags, 'max-steps');
  const schema = typeof flags.schema === 'string' ? await readSchema(flags.schema) : undefined;
  const required = flags.require as unknown as string[] | undefined;
  const steps = flags.step as unknown as string[] | undefined;
  const task = AgentTaskSchema.parse({
    goal,
    ...(schema ? { schema } : {}),
    ...(maxSteps ? { maxSteps } : {}),
    ...(required?.length ? { requiredFields: required } : {}),
    ...(steps?.length ? { steps } : {}),
    ...(flags.cua ? { computerUse: { model: computerUseModel(flags.model) } } : {}),
  });
  const vars = varFlags(flags);
  const policy = policyForCli(page);
  // The agent, the model SDKs and the browser load once the arguments are checked: a usage error
  // answers without them.
  const [
    { runAgent },
    { modelFor },
    { closeSharedBrowser, openSession },
    { noChatModel },
    { manifestedEvidence },
    { mergeRun },
    { createRun },
  ] = await Promise.all([
    import('../agent/run-agent.ts'),
    import('../api/run-op.ts'),
    import('../browser/session.ts'),
    import('../llm/computer-use/index.ts'),
    import('../runs/manifested-evidence.ts'),
    import('../runs/merge.ts'),
    import('../runs/run-records.ts'),
  ]);
  // A computer-use agent talks to its computer-use model only.
  const llm = flags.cua
    ? undefined
    : await modelFor(typeof flags.model === 'string' ? { model: flags.model } : {}, { policy });
  if (!llm && !flags.cua)
    throw new Error(`the agent needs a model. ${forCommandLine(noModelError().message)}`);
  // One agent call is a one-sample run in the layout of `browserfn run` (same stores under --out, same
  // run id format, sealed manifest, results.json, combined.csv), so `report` and `verify` read it.
  const { runStore, evidence } = localStores(flags);
  const spec = specOf(task, typeof flags.model === 'string' ? flags.model : undefined);
  const [sample] = sampleFromUrl(url);
  const { runId } = await createRun(runStore, evidence, { tenant: CLI_TENANT, spec, samples: [sample!] });
  const sampleId = sample!.sampleId;
  await runStore.updateRun(CLI_TENANT, runId, { status: 'running' });
  await runStore.updateSample(CLI_TENANT, runId, sampleId, { status: 'running', attempts: 1 });
  const deps: AgentDeps = {
    runStore,
    // Whatever the agent stores is chained into this sample's part of the run's manifest.
    evidence: manifestedEvidence(evidence, CLI_TENANT, runId, sampleId),
    llm: llm ?? noChatModel,
    newPage: async () => {
      const s = await openSession({ policy });
      return { page: s.page, close: () => s.close() };
    },
    checkNavigation: (u) => assertNavigable(u, policy),
    ...(vars ? { variables: vars } : {}),
    onStep: (s) => out(formatStep(s)),
  };
  try {
    const state = await runAgent({ tenant: CLI_TENANT, runId, sampleId, task, url }, deps);
    const stored = await runStore.getResult(CLI_TENANT, runId, sampleId);
    if (isFinal(state))
      await runStore.updateSample(CLI_TENANT, runId, sampleId, {
        status: (stored?.status ?? state.status) as SampleStatus,
        reason: stored?.reason ?? state.reason ?? '',
      });
    const merged = await mergeRun(runStore, evidence, CLI_TENANT, runId);
    out(
      JSON.stringify(
        {
          runId,
          status: state.status,
          reason: state.reason,
          data: state.data,
          steps: state.step,
          usage: state.usage,
          evidence: state.evidence.map((e) => ({ path: evidence.pathOf(e.key), sha256: e.sha256 })),
          manifestHead: merged.manifestHead,
        },
        null,
        2,
      ),
    );
    return state.status === 'done' ? 0 : 1;
  } finally {
    await closeSharedBrowser();
  }
}

/** The agent's task as a run's task spec: what `report` shows and `verify` seals with the run. */
function specOf(task: AgentTask, model: string | undefined) {
  try {
    return parseTaskSpec({
      goal: task.goal,
      mode: 'agent',
      ...(task.schema ? { outputSchema: task.schema } : {}),
      ...(task.requiredFields?.length ? { requiredFields: task.requiredFields } : {}),
      ...(task.maxSteps ? { maxSteps: task.maxSteps } : {}),
      ...(task.computerUse ? { computerUse: task.computerUse } : model ? { model } : {}),
    });
  } catch (err) {
    if (err instanceof SpecError) throw new UsageError(err.message.replace(/^task spec /, ''));
    throw err;
  }
}
