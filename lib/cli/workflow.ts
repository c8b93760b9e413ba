/**
 * `browserfn workflow validate|export|save|list` (issue 23 item 8): a workflow file or a stored
 * workflow (the local store, or DynamoDB + S3 when configured), checked, exported as a standalone
 * playwright-core script, or saved as its next version. Errors are one line and a non-zero exit.
 */
import { writeFile } from 'node:fs/promises';
import type { JsonObject } from '../store/ports.ts';
import { saveNextVersion } from '../store/workflow-ports.ts';
import { ExportError, exportPlaywright } from '../workflows/export-playwright.ts';
import type { Workflow } from '../workflows/schema.ts';
import { validateWorkflow } from '../workflows/validate.ts';
import { parse, UsageError } from './args.ts';
import { CLI_TENANT } from './local-stores.ts';
import { looksLikeFile, workflowFromFile } from './workflow-file.ts';

export const WORKFLOW_USAGE =
  'browserfn workflow run <id|file.json> <url> [--input k=v]… [--var k=v]… [--version N] [--model M] | compile <run-id>[/<sample-id>] | <action_log.json> [--id ID] [--url U] | plan "<prompt>" [--url U] [--input k=v]… [--save] [--id ID] [--out f.json] [--model M] | show <id|file.json> [--version N] [--run <run-id>/<sample-id>] [--out f.html] [--open] | validate <file.json> | export <id|file.json> --playwright [--version N] [--out f.ts] | save <file.json> [--id ID] | list';

const actions = () => import('./workflow-actions.ts');
/** The workflow store, loaded when asked for: DynamoDB + S3 when configured brings the AWS SDK. */
const storesFromEnv = async () => (await import('../store/config.ts')).storesFromEnv();

/** A workflow from a file, or a stored one by id (latest, or `version`). */
async function loadWorkflow(ref: string, version: number | undefined): Promise<Workflow> {
  return (await loadWithId(ref, version)).workflow;
}

/** As `loadWorkflow`, with the store id when it came from the store. */
async function loadWithId(
  ref: string,
  version: number | undefined,
): Promise<{ workflow: Workflow; id?: string }> {
  if (looksLikeFile(ref)) return { workflow: await workflowFromFile(ref) };
  const stores = await storesFromEnv();
  const record = await stores.workflows.getVersion(CLI_TENANT, ref, version);
  if (!record)
    throw new UsageError(
      `no workflow "${ref}"${version ? ` version ${version}` : ''} in ${stores.describe.workflows}`,
    );
  const checked = validateWorkflow(record.document);
  if (!checked.ok) throw new UsageError(`stored workflow ${ref} v${record.version} no longer validates`);
  return { workflow: checked.workflow, id: ref };
}

function versionFlag(value: unknown): number | undefined {
  if (value === undefined) return undefined;
  const n = Number(value);
  if (!Number.isInteger(n) || n < 1) throw new UsageError(`--version: a whole number from 1, got "${value}"`);
  return n;
}

export async function workflowCommand(argv: string[], out: (s: string) => void): Promise<number> {
  const [sub, ...rest] = argv;
  // The commands that do work parse their own options.
  if (sub === 'run') return (await actions()).workflowRunCommand(rest, out, loadWithId, versionFlag);
  if (sub === 'compile') return (await actions()).workflowCompileCommand(rest, out);
  if (sub === 'plan') return (await actions()).workflowPlanCommand(rest, out);
  if (sub === 'show') return (await import('./workflow-show.ts')).workflowShowCommand(rest, out);
  const { flags, positionals } = parse(rest, {
    playwright: { type: 'boolean' },
    out: { type: 'string' },
    version: { type: 'string' },
    id: { type: 'string' },
  });
  switch (sub) {
    case 'validate': {
      const file = positionals[0];
      if (!file) throw new UsageError('missing <file.json>');
      const workflow = await workflowFromFile(file);
      out(`ok: ${workflow.name}, ${workflow.nodes.length} top-level nodes`);
      return 0;
    }
    case 'export': {
      const ref = positionals[0];
      if (!ref) throw new UsageError('missing <id|file.json>');
      if (!flags.playwright) throw new UsageError('export needs --playwright (the one format so far)');
      const workflow = await loadWorkflow(ref, versionFlag(flags.version));
      let script: string;
      try {
        script = exportPlaywright(workflow);
      } catch (err) {
        if (err instanceof ExportError) throw new UsageError(err.message);
        throw err;
      }
      if (typeof flags.out === 'string') {
        await writeFile(flags.out, script);
        out(flags.out);
      } else out(script);
      return 0;
    }
    case 'save': {
      const file = positionals[0];
      if (!file) throw new UsageError('missing <file.json>');
      const workflow = await workflowFromFile(file);
      const id =
        typeof flags.id === 'string' ? flags.id : workflow.name.toLowerCase().replace(/[^a-z0-9]+/g, '-');
      const stores = await storesFromEnv();
      const version = await saveNextVersion(stores.workflows, {
        tenant: CLI_TENANT,
        id,
        document: workflow as unknown as JsonObject,
      });
      out(`saved ${id} v${version} in ${stores.describe.workflows}`);
      return 0;
    }
    case 'list': {
      for (const w of await (await storesFromEnv()).workflows.list(CLI_TENANT))
        out(`${w.id}\tv${w.latest}\t${w.name}`);
      return 0;
    }
    default:
      throw new UsageError(sub ? `unknown workflow command "${sub}"` : 'missing a workflow command');
  }
}
