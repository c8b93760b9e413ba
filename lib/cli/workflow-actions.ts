/**
 * `browserfn workflow run | compile | plan` (issue 23 items 3, 5, 8): run a workflow (stored or a file)
 * on one URL and print its data and one line per node; compile a finished sample of a local run (or a
 * file of acts) into a saved workflow; have the model plan one from words. Errors are one line and a
 * non-zero exit; a workflow that ran and failed prints its nodes and exits 1.
 */
import { randomUUID } from 'node:crypto';
import { existsSync } from 'node:fs';
import { writeFile } from 'node:fs/promises';
import { dirname, join, resolve } from 'node:path';
import { modelFor } from '../api/run-op.ts';
import { idFromName } from '../api/workflows.ts';
import { assertNavigable } from '../browser/guard.ts';
import { mergePolicy, policyFromEnv } from '../browser/guard-policy.ts';
import { openSession } from '../browser/session.ts';
import { forCommandLine, noModelError } from '../llm/config.ts';
import { storesFromEnv } from '../store/config.ts';
import { LocalEvidenceStore } from '../store/local-evidence-store.ts';
import { LocalRunStore } from '../store/local-run-store.ts';
import type { JsonObject } from '../store/ports.ts';
import { saveNextVersion } from '../store/workflow-ports.ts';
import { type ActRecord, CompileError, compileActs, compileAgentSample } from '../workflows/compile.ts';
import {
  compileStoredSample,
  SampleNotFound,
  type StoredSampleSource,
  type WithPage,
} from '../workflows/compile-stored.ts';
import { aiAliases, PlanError, planWorkflow } from '../workflows/director.ts';
import { runServedOnly, runWorkflowOnce, type WorkflowRunAnswer } from '../workflows/run-one.ts';
import type { Workflow } from '../workflows/schema.ts';
import { describeIssue, resolveInputs, WorkflowError } from '../workflows/validate.ts';
import { type Flags, parse, UsageError } from './args.ts';
import { CLI_TENANT, localStores } from './local-stores.ts';
import { readJsonFile } from './workflow-file.ts';

/** The http(s) page a workflow runs on or starts from; its host is allowed for this command. */
function webUrl(value: string | undefined, what: string): string {
  if (!value) throw new UsageError(`missing <${what}>`);
  try {
    const u = new URL(value);
    if (u.protocol === 'http:' || u.protocol === 'https:') return u.toString();
  } catch {}
  throw new UsageError(`<${what}> must be an http(s) URL, got "${value}"`);
}

const policyFor = (url: string) =>
  mergePolicy(policyFromEnv(), { allowPrivate: false, allowHosts: [new URL(url).host] });

/** `--input k=v` / `--var k=v` pairs. */
function pairs(list: unknown, flag: string): Record<string, string> {
  const out: Record<string, string> = {};
  for (const item of (list as string[] | undefined) ?? []) {
    const at = item.indexOf('=');
    if (at <= 0) throw new UsageError(`--${flag} expects name=value, got "${item.split('=')[0]}…"`);
    out[item.slice(0, at)] = item.slice(at + 1);
  }
  return out;
}

const modelFlag = (flags: Flags) => (typeof flags.model === 'string' ? { model: flags.model } : {});

/** One line per node: alias, status, how it was resolved, tokens. */
export function nodeLines(answer: WorkflowRunAnswer): string[] {
  return Object.entries(answer.results).map(([alias, r]) => {
    const tokens = r.usage.promptTokens + r.usage.completionTokens;
    return `${alias}\t${r.status}\t${r.resolvedBy}\t${tokens} tokens${r.error ? `\t${r.error.message}` : ''}`;
  });
}

export async function workflowRunCommand(
  argv: string[],
  out: (s: string) => void,
  load: (ref: string, version: number | undefined) => Promise<{ workflow: Workflow; id?: string }>,
  version: (v: unknown) => number | undefined,
): Promise<number> {
  const { flags, positionals } = parse(argv, {
    input: { type: 'string', multiple: true },
    var: { type: 'string', multiple: true },
    version: { type: 'string' },
    model: { type: 'string' },
  });
  const ref = positionals[0];
  if (!ref) throw new UsageError('missing <id|file.json>');
  const url = webUrl(positionals[1], 'url');
  const { workflow, id } = await load(ref, version(flags.version));
  const inputs = pairs(flags.input, 'input');
  try {
    resolveInputs(workflow, { url, ...inputs });
  } catch (err) {
    if (err instanceof WorkflowError) throw new UsageError(err.issues.map(describeIssue).join('; '));
    throw err;
  }
  const vars = pairs(flags.var, 'var');
  const policy = policyFor(url);
  // Without a model the deterministic nodes run all the same; an AI node says it has none.
  const llm = await modelFor(modelFlag(flags), { policy });
  const first = workflow.nodes[0];
  const navigatesFirst = first?.type === 'browser_action' && first.config.action === 'navigate';
  const one = {
    tenant: CLI_TENANT,
    workflow,
    url,
    inputs,
    ...(id ? { stored: { store: storesFromEnv().workflows, id } } : {}),
  };
  const variables = Object.keys(vars).length ? { variables: vars } : {};
  // Read from the page's served HTML when the workflow is marked so: no browser is started for it.
  const served = navigatesFirst ? await runServedOnly({ ...one, policy, ...variables }) : {};
  let answer: WorkflowRunAnswer;
  if (served.answer) answer = served.answer;
  else {
    const session = await openSession({ policy, ...(navigatesFirst ? {} : { url }) });
    try {
      answer = await runWorkflowOnce({
        ...one,
        ...(served.servedMiss !== undefined ? { servedMiss: served.servedMiss } : {}),
        deps: {
          page: session.page,
          checkNavigation: (u) => assertNavigable(u, policy),
          ...(llm ? { llm } : {}),
          ...variables,
        },
      });
    } finally {
      await session.close();
    }
  }
  out(JSON.stringify(answer.data, null, 2));
  for (const line of nodeLines(answer)) out(line);
  const total = answer.usage.promptTokens + answer.usage.completionTokens;
  out(`${answer.status}: v${answer.version}, ${total} tokens, ${answer.heals.length} heal(s)`);
  if (answer.healedVersion) out(`healed: saved as ${id} v${answer.healedVersion}`);
  else if (!id && answer.heals.some((h) => h.confirmed))
    out('healed: not saved (the workflow came from a file)');
  if (answer.status !== 'done') {
    out(`failed at ${answer.failedAt ?? '?'}: ${answer.reason ?? 'no reason given'}`);
    return 1;
  }
  return 0;
}

/** Opens `url` in a fresh guarded context for `fn`. */
const openOn: WithPage = async <T>(url: string, fn: (page: import('playwright-core').Page) => Promise<T>) => {
  const session = await openSession({ url, policy: policyFor(url) });
  try {
    return await fn(session.page);
  } finally {
    await session.close();
  }
};

/** A file of acts (`[{ instruction, result }]`, or `{ url, acts }`), or an agent's action_log.json. */
async function compileFile(file: string, flags: Flags): Promise<Workflow> {
  const value = await readJsonFile(file);
  const obj = value && typeof value === 'object' && !Array.isArray(value) ? (value as JsonObject) : undefined;
  const list = Array.isArray(value) ? value : Array.isArray(obj?.acts) ? obj.acts : undefined;
  if (!list)
    throw new UsageError(`${file}: expected a list of acts ({ instruction, result }) or { url, acts }`);
  const first = list[0] as JsonObject | undefined;
  if (first && 'actions' in first && 'url' in first && !('instruction' in first)) {
    // An agent sample's log: its result.json sits beside it.
    const result = (await readJsonFile(join(dirname(file), 'result.json'))) as JsonObject;
    const data = result.data;
    const finalUrl = typeof result.url === 'string' ? result.url : undefined;
    const sample = { actionLog: value, result };
    if (!finalUrl || !data || typeof data !== 'object' || Object.keys(data).length === 0)
      return compileAgentSample(sample);
    return openOn(finalUrl, (page) => compileAgentSample(sample, { page }));
  }
  const url = typeof flags.url === 'string' ? flags.url : typeof obj?.url === 'string' ? obj.url : undefined;
  if (!url) throw new UsageError(`${file}: the page the first act ran on is missing: give --url`);
  return compileActs(list as unknown as ActRecord[], {
    startUrl: webUrl(url, 'url'),
    ...(typeof flags.name === 'string' ? { name: flags.name } : {}),
  });
}

/** The sample of `run-id[/sample-id]` in the local stores of `browserfn run` (or `browserfn agent`). */
async function compileRun(ref: string, flags: Flags): Promise<Workflow> {
  const [runId, given] = ref.split('/') as [string, string | undefined];
  const run = localStores(flags);
  const agentRoot = resolve(typeof flags.out === 'string' ? flags.out : 'evidence');
  const sources: StoredSampleSource[] = [
    { runStore: run.runStore, evidence: run.evidence },
    { runStore: new LocalRunStore(join(agentRoot, '.runs')), evidence: new LocalEvidenceStore(agentRoot) },
  ];
  for (const src of sources) {
    const results = await src.runStore.listResults(CLI_TENANT, runId).catch(() => []);
    if (results.length === 0 && !(await src.runStore.getRun(CLI_TENANT, runId).catch(() => undefined)))
      continue;
    let sampleId = given;
    if (!sampleId) {
      if (results.length !== 1)
        throw new UsageError(
          `run ${runId} has ${results.length} finished samples: name one as ${runId}/<sample-id> (${results
            .slice(0, 5)
            .map((r) => r.sampleId)
            .join(', ')})`,
        );
      sampleId = results[0]!.sampleId;
    }
    return compileStoredSample(
      src,
      {
        tenant: CLI_TENANT,
        runId,
        sampleId,
        ...(typeof flags.name === 'string' ? { name: flags.name } : {}),
      },
      openOn,
    );
  }
  throw new UsageError(`no run "${runId}" under ${run.base}`);
}

export async function workflowCompileCommand(argv: string[], out: (s: string) => void): Promise<number> {
  const { flags, positionals } = parse(argv, {
    id: { type: 'string' },
    url: { type: 'string' },
    name: { type: 'string' },
    out: { type: 'string' },
  });
  const ref = positionals[0];
  if (!ref) throw new UsageError('missing <run-id>[/<sample-id>] or <action_log.json>');
  let workflow: Workflow;
  try {
    workflow =
      ref.endsWith('.json') || existsSync(ref) ? await compileFile(ref, flags) : await compileRun(ref, flags);
  } catch (err) {
    if (err instanceof CompileError || err instanceof SampleNotFound)
      throw new Error(`cannot compile: ${err.message}`);
    throw err;
  }
  // A file of acts has no name of its own: without --id it gets a fresh id, never another's next version.
  const id =
    typeof flags.id === 'string'
      ? flags.id
      : workflow.source?.kind === 'acts' && typeof flags.name !== 'string'
        ? `acts-${randomUUID().slice(0, 8)}`
        : idFromName(workflow.name);
  const stores = storesFromEnv();
  const version = await saveNextVersion(stores.workflows, {
    tenant: CLI_TENANT,
    id,
    document: workflow as unknown as JsonObject,
  });
  const ai = aiAliases(workflow.nodes);
  out(
    `saved ${id} v${version} in ${stores.describe.workflows}: ${workflow.nodes.length} nodes, ${ai.length ? `AI nodes: ${ai.join(', ')}` : 'no AI nodes'}`,
  );
  return 0;
}

export async function workflowPlanCommand(argv: string[], out: (s: string) => void): Promise<number> {
  const { flags, positionals } = parse(argv, {
    url: { type: 'string' },
    input: { type: 'string', multiple: true },
    save: { type: 'boolean' },
    id: { type: 'string' },
    out: { type: 'string' },
    model: { type: 'string' },
  });
  const prompt = positionals.join(' ').trim();
  if (!prompt) throw new UsageError('missing "<prompt>"');
  const url = typeof flags.url === 'string' ? webUrl(flags.url, 'url') : undefined;
  const llm = await modelFor(modelFlag(flags), { policy: policyFromEnv() });
  if (!llm) throw new Error(`planning a workflow needs a model. ${forCommandLine(noModelError().message)}`);
  const inputs = pairs(flags.input, 'input');
  let plan: Awaited<ReturnType<typeof planWorkflow>>;
  try {
    plan = await planWorkflow(prompt, {
      llm,
      ...(url ? { url } : {}),
      ...(Object.keys(inputs).length ? { inputs } : {}),
    });
  } catch (err) {
    if (err instanceof PlanError) throw new Error(err.message);
    throw err;
  }
  const { workflow, usage } = plan;
  const ai = aiAliases(workflow.nodes);
  const summary = `planned "${workflow.name}": ${workflow.nodes.length} nodes, ${ai.length ? `AI nodes: ${ai.join(', ')}` : 'no AI nodes'}; ${usage.promptTokens}+${usage.completionTokens} tokens${plan.repaired ? ' (repaired once)' : ''}`;
  if (typeof flags.out === 'string') {
    await writeFile(flags.out, `${JSON.stringify(workflow, null, 2)}\n`);
    out(`${summary}; wrote ${flags.out}`);
  } else if (!flags.save) out(JSON.stringify(workflow, null, 2));
  else out(summary);
  if (flags.save) {
    const id = typeof flags.id === 'string' ? flags.id : idFromName(workflow.name);
    const stores = storesFromEnv();
    const version = await saveNextVersion(stores.workflows, {
      tenant: CLI_TENANT,
      id,
      document: workflow as unknown as JsonObject,
    });
    out(`saved ${id} v${version} in ${stores.describe.workflows}`);
  }
  return 0;
}
