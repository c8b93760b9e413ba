/**
 * `browserfn workflow show <id|file.json> [--version N] [--run <run-id>/<sample-id>] [--out f.html]
 * [--open]` (issue 23 item 9): writes the workflow's graph page (lib/workflows/show.ts) and prints its
 * path. With `--run`, each node shows what it did in that sample: the sample's workflow state (its
 * last checkpoint) gives the node results, its result record the heals.
 */
import { spawn } from 'node:child_process';
import { writeFile } from 'node:fs/promises';
import { resolve } from 'node:path';
import type { JsonObject } from '../store/ports.ts';
import type { Workflow } from '../workflows/schema.ts';
import { renderWorkflowPage, type ShowOptions } from '../workflows/show.ts';
import type { HealRecord, NodeResult } from '../workflows/types.ts';
import { validateWorkflow } from '../workflows/validate.ts';
import { parse, UsageError } from './args.ts';
import { CLI_TENANT } from './local-stores.ts';
import { looksLikeFile, workflowFromFile } from './workflow-file.ts';

export const WORKFLOW_SHOW_USAGE =
  'browserfn workflow show <id|file.json> [--version N] [--run <run-id>/<sample-id>] [--out f.html] [--open]';

const isObject = (v: unknown): v is Record<string, unknown> =>
  typeof v === 'object' && v !== null && !Array.isArray(v);

/**
 * The node results and heals a sample's workflow left: its checkpoint holds the executor's state
 * (`run` in a workflow sample's state, or the state itself), its result record the heals.
 */
export function sampleResults(
  checkpointState: JsonObject | undefined,
  resultUsage: JsonObject | undefined,
): Pick<ShowOptions, 'results' | 'heals'> | undefined {
  const run = isObject(checkpointState?.run) ? checkpointState.run : checkpointState;
  const results = isObject(run?.results) ? (run.results as unknown as Record<string, NodeResult>) : undefined;
  const heals = Array.isArray(resultUsage?.heals)
    ? (resultUsage.heals as unknown as HealRecord[])
    : Array.isArray(run?.heals)
      ? (run.heals as unknown as HealRecord[])
      : undefined;
  if (!results && !heals) return undefined;
  return { ...(results ? { results } : {}), ...(heals ? { heals } : {}) };
}

function versionFlag(value: unknown): number | undefined {
  if (value === undefined) return undefined;
  const n = Number(value);
  if (!Number.isInteger(n) || n < 1) throw new UsageError(`--version: a whole number from 1, got "${value}"`);
  return n;
}

/** Opens the file in the desktop's browser; says so instead of failing when there is none. */
function openInBrowser(path: string, out: (s: string) => void): void {
  const cmd = process.platform === 'darwin' ? 'open' : process.platform === 'win32' ? 'explorer' : 'xdg-open';
  const child = spawn(cmd, [path], { stdio: 'ignore', detached: true });
  child.on('error', () => out(`could not run ${cmd}; open ${path} yourself`));
  child.unref();
}

export async function workflowShowCommand(
  argv: string[],
  out: (s: string) => void = (s) => process.stdout.write(`${s}\n`),
): Promise<number> {
  const { flags, positionals } = parse(argv, {
    version: { type: 'string' },
    run: { type: 'string' },
    out: { type: 'string' },
    open: { type: 'boolean' },
  });
  const ref = positionals[0];
  if (!ref) throw new UsageError(`missing <id|file.json>; usage: ${WORKFLOW_SHOW_USAGE}`);
  if (positionals.length > 1) throw new UsageError(`one workflow at a time, got "${positionals.join(' ')}"`);
  const version = versionFlag(flags.version);
  let runRef: { runId: string; sampleId: string } | undefined;
  if (flags.run !== undefined) {
    const m = /^([^/\s]+)\/([^/\s]+)$/.exec(String(flags.run));
    if (!m) throw new UsageError(`--run: <run-id>/<sample-id>, got "${String(flags.run)}"`);
    runRef = { runId: m[1]!, sampleId: m[2]! };
  }

  let workflow: Workflow;
  const opts: ShowOptions = {};
  // The stores `browserfn run` and `workflow save` use (local files, or DynamoDB + S3 when configured).
  const { storesFromEnv } = await import('../store/config.ts');
  const stores = storesFromEnv();
  if (looksLikeFile(ref)) {
    if (version !== undefined) throw new UsageError('--version: only for a stored workflow, not a file');
    workflow = await workflowFromFile(ref);
  } else {
    const record = await stores.workflows.getVersion(CLI_TENANT, ref, version);
    if (!record)
      throw new UsageError(
        `no workflow "${ref}"${version ? ` version ${version}` : ''} in ${stores.describe.workflows}`,
      );
    const checked = validateWorkflow(record.document);
    if (!checked.ok) throw new UsageError(`stored workflow ${ref} v${record.version} no longer validates`);
    workflow = { ...checked.workflow, version: record.version };
    opts.id = ref;
    opts.versions = (await stores.workflows.listVersions(CLI_TENANT, ref)).map((v) => ({
      version: v.version,
      createdAt: v.createdAt,
      verified: v.verified,
      ...(v.note !== undefined ? { note: v.note } : {}),
    }));
  }

  if (runRef) {
    const runStore = stores.runs;
    const { runId, sampleId } = runRef;
    if (!(await runStore.getRun(CLI_TENANT, runId)))
      throw new UsageError(`--run: no run "${runId}" in ${stores.describe.runs}`);
    const [checkpoint, result] = await Promise.all([
      runStore.loadCheckpoint(CLI_TENANT, runId, sampleId),
      runStore.getResult(CLI_TENANT, runId, sampleId),
    ]);
    if (!checkpoint && !result)
      throw new UsageError(`--run: run ${runId} has no sample "${sampleId}" that ran`);
    const found = sampleResults(checkpoint?.state, result?.usage);
    if (!found) throw new UsageError(`--run: sample ${sampleId} of run ${runId} did not run a workflow`);
    Object.assign(opts, found, { resultsFrom: `run ${runId}, sample ${sampleId}` });
  }

  const html = renderWorkflowPage(workflow, opts);
  const safe = (opts.id ?? workflow.name).replace(/[^A-Za-z0-9_-]+/g, '-').slice(0, 80);
  const file = resolve(
    typeof flags.out === 'string' ? flags.out : `workflow-${safe}-v${workflow.version}.html`,
  );
  await writeFile(file, html);
  out(file);
  if (flags.open) openInBrowser(file, out);
  return 0;
}
