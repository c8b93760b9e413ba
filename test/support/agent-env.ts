import { mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Browser } from 'playwright-core';
import type { AgentDeps } from '../../lib/agent/deps.ts';
import { toolsOffered } from '../../lib/agent/tools.ts';
import { assertNavigable } from '../../lib/browser/guard.ts';
import { mergePolicy } from '../../lib/browser/guard-policy.ts';
import { openSession } from '../../lib/browser/session.ts';
import { createLlmClient } from '../../lib/llm/client.ts';
import type { ModelConfig } from '../../lib/llm/types.ts';
import { LocalEvidenceStore } from '../../lib/store/local-evidence-store.ts';
import { LocalRunStore } from '../../lib/store/local-run-store.ts';
import type { FixtureServer } from './fixture-server.ts';
import type { RecordedRequest, ScriptedModel, ScriptedReply } from './llm-server.ts';
import { type Flavour, modelConfig } from './ops-env.ts';

export async function tempRoot(): Promise<string> {
  return mkdtemp(join(tmpdir(), 'bfn-agent-'));
}

export interface AgentEnv {
  deps: AgentDeps;
  runStore: LocalRunStore;
  evidence: LocalEvidenceStore;
  logs: string[];
  root: string;
}

/** Stores on local files in a fresh folder, the scripted model through the chosen SDK, guarded pages. */
export async function agentEnv(opts: {
  browser: () => Browser;
  site: FixtureServer;
  llm: ScriptedModel;
  flavour: Flavour;
  variables?: Record<string, string>;
  model?: Partial<ModelConfig>;
  root?: string;
}): Promise<AgentEnv> {
  const root = opts.root ?? (await tempRoot());
  const runStore = new LocalRunStore(join(root, 'runs'));
  const evidence = new LocalEvidenceStore(join(root, 'evidence'));
  const logs: string[] = [];
  const policy = mergePolicy(
    { allowPrivate: false, allowHosts: [] },
    { allowHosts: [`127.0.0.1:${opts.site.port}`] },
  );
  const log = (e: unknown) => logs.push(JSON.stringify(e));
  const deps: AgentDeps = {
    runStore,
    evidence,
    llm: createLlmClient({ ...modelConfig(opts.llm, opts.flavour), maxRetries: 1, ...opts.model }, { log }),
    newPage: async () => {
      const session = await openSession({ browser: opts.browser(), policy });
      return { page: session.page, close: () => session.close() };
    },
    checkNavigation: (url) => assertNavigable(url, policy),
    log,
    ...(opts.variables ? { variables: opts.variables } : {}),
  };
  return { deps, runStore, evidence, logs, root };
}

/** The JSON Schema of the agent's reply as the request carried it (either provider). */
export function replySchemaOf(r: RecordedRequest): unknown {
  const body = r.body as {
    response_format?: { json_schema?: { schema?: unknown } };
    tools?: { input_schema?: unknown }[];
  };
  if (r.provider === 'openai') return body.response_format?.json_schema?.schema;
  return body.tools?.[0]?.input_schema;
}

export const offered = (r: RecordedRequest): string[] => toolsOffered(replySchemaOf(r));
export const isDecision = (r: RecordedRequest) => r.schemaName === 'next_actions';

/** The page part of a decision prompt: `Current page: <url>`. */
export function currentUrl(r: RecordedRequest): string {
  return /Current page: (\S+)/.exec(r.text)?.[1] ?? '';
}

/** A decision reply. */
export const reply = (actions: unknown[], extra: Record<string, string> = {}) => ({
  json: { evaluation_previous_step: 'ok', next_goal: 'continue', ...extra, actions },
});

/** The step number a decision prompt announces (`Step 3 of 10`). */
export function stepOf(r: RecordedRequest): number {
  return Number(/^Step (\d+) of \d+/m.exec(r.text)?.[1] ?? 0);
}

/** A model scripted per step: `fn(step, request)` answers each decision call. */
export function perStep(fn: (step: number, r: RecordedRequest) => ScriptedReply) {
  return (r: RecordedRequest): ScriptedReply => (isDecision(r) ? fn(stepOf(r), r) : { status: 400 });
}
