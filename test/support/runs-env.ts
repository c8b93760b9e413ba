import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Browser } from 'playwright-core';
import { mergePolicy } from '../../lib/browser/guard-policy.ts';
import { createLlmClient } from '../../lib/llm/client.ts';
import { agentSliceRunner } from '../../lib/runs/agent-slice-binding.ts';
import type { RunDeps } from '../../lib/runs/handlers.ts';
import type { SliceRunner } from '../../lib/runs/slice-runner.ts';
import { LocalEvidenceStore } from '../../lib/store/local-evidence-store.ts';
import { LocalRunStore } from '../../lib/store/local-run-store.ts';
import type { FixtureServer } from './fixture-server.ts';
import type { RecordedRequest, ScriptedModel, ScriptedReply } from './llm-server.ts';
import { modelConfig } from './ops-env.ts';

/** Stores in a fresh temp folder. */
export async function tempStores(prefix = 'bfn-runs-') {
  const dir = await mkdtemp(join(tmpdir(), prefix));
  return {
    dir,
    runStore: new LocalRunStore(join(dir, 'runs')),
    evidence: new LocalEvidenceStore(join(dir, 'evidence')),
    cleanup: () => rm(dir, { recursive: true, force: true }),
  };
}

/** The page's h1 as the model would read it from the prompt's outline. */
export function headingIn(req: RecordedRequest): string | undefined {
  return /h1: ([^\n[]+)/.exec(req.text)?.[1]?.trim();
}

/**
 * The model's answer that ends a sample with `data`: the one place that knows both reply shapes (the
 * agent's `done` on its decision call, or extract mode's one read). Pass the request: without it the
 * answer has the extract shape, which an agent-mode sample rejects on every step.
 */
export function finishWith(data: Record<string, unknown>, req?: RecordedRequest): ScriptedReply {
  // The agent mode's decision call ends the sample with its `done` tool; the extract mode's one call
  // answers with the data itself.
  if (req?.schemaName === 'next_actions')
    return {
      json: {
        evaluation_previous_step: 'the page is open',
        next_goal: 'report what was asked',
        actions: [{ tool: 'done', data }],
      },
    };
  return { json: { data, done: true } };
}

/** A model that ends every sample with the page's heading as `title` (either mode). */
export function titleModel(llm: ScriptedModel): void {
  llm.setHandler((req) => finishWith({ title: headingIn(req) ?? null }, req));
}

export function runDeps(
  stores: { runStore: RunDeps['runStore']; evidence: RunDeps['evidence'] },
  browser: Browser,
  site: FixtureServer,
  llm: ScriptedModel,
  extra: Partial<RunDeps> & { slices?: SliceRunner } = {},
): RunDeps {
  return {
    runStore: stores.runStore,
    evidence: stores.evidence,
    slices: agentSliceRunner,
    browser: async () => browser,
    policy: mergePolicy({ allowPrivate: false, allowHosts: [] }, { allowHosts: [`127.0.0.1:${site.port}`] }),
    llmFor: async () => createLlmClient(modelConfig(llm, 'openai')),
    sliceBudgetMs: 60_000,
    ...extra,
  };
}
