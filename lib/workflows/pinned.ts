/**
 * Replays a recorded element action (`browser_action` with a pinned `target`): find the element by
 * its candidates, act, check the post-conditions. When the candidates no longer hold (or the
 * post-conditions fail) the step heals: the zero-token matcher on the kept instruction, then ONE
 * observe-only model call — never a second act that might click, submit or pay twice. The result
 * says how the element was found and, when healed, carries the record a new version is made from.
 */
import type { Page } from 'playwright-core';
import { executeAction } from '../actions/execute.ts';
import type { Action } from '../actions/types.ts';
import { emptyUsage, type Usage } from '../llm/types.ts';
import { observe } from '../ops/observe.ts';
import { observeWithoutModel } from '../ops/observe-match.ts';
import { OpError } from '../ops/types.ts';
import { readCandidates } from '../perception/candidates.ts';
import { findObstacle } from '../perception/obstacles.ts';
import { redactText } from '../perception/redact.ts';
import { snapshot } from '../perception/snapshot.ts';
import type { DurableLocator } from '../perception/types.ts';
import { wholePage } from '../perception/types.ts';
import { awaitPostConditions, describeFailures } from './postconditions.ts';
import type { LocatorCandidate, PinnedActionConfig } from './schema.ts';
import { type CandidateTry, describeCandidate, matchTarget } from './target-match.ts';
import type { HealRecord, NodeResult, NodeRun, NodeRunner, WorkflowDeps } from './types.ts';

const POINTER = new Set(['click', 'dblclick', 'hover', 'check', 'uncheck']);

function actionOf(config: PinnedActionConfig, locator: DurableLocator): Action {
  const target = { locator };
  switch (config.action) {
    case 'fill':
    case 'select':
      return { method: config.action, target, args: [config.value] };
    case 'press':
      return { method: 'press', target, args: [config.key] };
    default:
      return { method: config.action, target };
  }
}

interface Done {
  ok: boolean;
  message: string;
  /** The dismiss control pressed to clear a banner first. */
  cleared?: string;
}

/** Does the action; a banner covering the element is dismissed first (zero tokens). */
async function perform(page: Page, action: Action, deps: WorkflowDeps): Promise<Done> {
  let cleared: string | undefined;
  const locator = (action.target as { locator: DurableLocator }).locator;
  if (POINTER.has(action.method)) {
    const obstacle = await findObstacle(page, locator.xpath);
    if (obstacle) {
      if (!obstacle.dismiss)
        return {
          ok: false,
          message: `the element is covered by ${obstacle.coveredBy} and nothing closes it`,
        };
      const closed = await executeAction(page, {
        method: 'click',
        target: { locator: obstacle.dismiss.xpath },
      });
      if (!closed.ok)
        return { ok: false, message: `could not close ${obstacle.coveredBy}: ${closed.message}` };
      cleared = obstacle.dismiss.name;
      deps.log?.({
        level: 'info',
        msg: 'closed what covered the element',
        by: obstacle.coveredBy,
        pressed: cleared,
      });
    }
  }
  const outcome = await executeAction(page, action, {
    timeoutMs: 8000,
    ...(deps.variables ? { variables: deps.variables } : {}),
    ...(deps.checkNavigation ? { checkNavigation: deps.checkNavigation } : {}),
  });
  return { ok: outcome.ok, message: outcome.message, ...(cleared ? { cleared } : {}) };
}

interface Found {
  locator: DurableLocator;
  via: 'matcher' | 'llm';
  usage: Usage;
}

/** Tier 1: the zero-token matcher on the instruction; it answers only when it is sure. */
async function byMatcher(page: Page, instruction: string): Promise<Found | { why: string }> {
  const snap = await snapshot(page, { text: false });
  const found = observeWithoutModel(instruction, wholePage(snap));
  if (found.kind !== 'elements') return { why: `matcher: ${found.reason}` };
  if (found.picks.length !== 1) return { why: `matcher: ${found.picks.length} elements fit` };
  const el = found.picks[0]!.element;
  return { locator: el.locator, via: 'matcher', usage: emptyUsage() };
}

/** Tier 2: one observe call (the model only points; we act). Several answers = not sure = no. */
async function byModel(
  page: Page,
  instruction: string,
  deps: WorkflowDeps,
): Promise<Found | { why: string }> {
  if (!deps.llm) return { why: 'no model is configured for the heal' };
  try {
    // Secrets stay out: the instruction keeps `%name%` placeholders and no variables are passed.
    const res = await observe(
      { page, llm: deps.llm, ...(deps.signal ? { signal: deps.signal } : {}) },
      instruction,
    );
    if (res.elements.length !== 1)
      return { why: `the model pointed at ${res.elements.length} elements`, ...{ usage: res.usage } };
    const el = res.elements[0]!;
    return {
      locator: { xpath: el.selector, role: el.role, name: el.name },
      via: res.resolvedBy === 'llm' ? 'llm' : 'matcher',
      usage: res.usage,
    };
  } catch (err) {
    const why = err instanceof OpError ? err.message : String(err);
    return { why: `the model could not find it: ${why.split('\n')[0]}` };
  }
}

/** How many elements of the page have the found element's role and name (as perception reads them). */
async function lookAlikes(page: Page, locator: DurableLocator): Promise<number> {
  if (!locator.role || !locator.name.trim()) return 0;
  const snap = await snapshot(page, { text: false });
  return snap.elements.filter((e) => e.role === locator.role && e.name === locator.name).length;
}

const addUsage = (a: Usage, b: Usage | undefined): Usage =>
  b
    ? {
        promptTokens: a.promptTokens + b.promptTokens,
        completionTokens: a.completionTokens + b.completionTokens,
        cachedTokens: a.cachedTokens + b.cachedTokens,
        model: b.model || a.model,
        ms: a.ms + b.ms,
        costUsd: (a.costUsd ?? 0) + (b.costUsd ?? 0),
        calls: a.calls + b.calls,
      }
    : a;

const listTried = (tried: CandidateTry[]) =>
  tried.map((t) => `${describeCandidate(t.candidate)}${t.why ? ` (${t.why})` : ''}`).join('; ');

export const runPinnedAction: NodeRunner = async (run: NodeRun): Promise<NodeResult> => {
  const started = performance.now();
  const { node, deps } = run;
  if (node.type !== 'browser_action' || !('target' in node.config))
    throw new Error(`${node.alias}: runPinnedAction runs browser_action nodes with a target`);
  const config = node.config;
  const page = deps.page;
  const conditions = config.postconditions ?? [];
  const secrets = deps.variables;
  let usage = emptyUsage();
  const result = (r: Omit<NodeResult, 'alias' | 'type' | 'usage' | 'ms'>): NodeResult => ({
    alias: node.alias,
    type: 'browser_action',
    usage,
    ms: Math.round(performance.now() - started),
    ...r,
  });

  // 1. The recorded candidates.
  const match = await matchTarget(page, config.target);
  let reason: string;
  let actedOn: string | undefined;
  let cleared: string | undefined;
  if (match.ok) {
    const done = await perform(page, actionOf(config, match.locator), deps);
    cleared = done.cleared;
    if (done.ok) {
      actedOn = match.locator.xpath;
      const failures = await awaitPostConditions(page, conditions, {
        target: match.locator.xpath,
        ...(secrets ? { variables: secrets } : {}),
      });
      if (failures.length === 0)
        return result({
          status: 'ok',
          resolvedBy: 'deterministic',
          output: {
            url: page.url(),
            candidate: match.index,
            ...(cleared ? { cleared } : {}),
          },
        });
      reason = `after the step: ${describeFailures(failures)}`;
    } else reason = redactText(`the action failed: ${done.message}`, secrets);
  } else reason = `no candidate held: ${listTried(match.tried)}`;

  // 2. Heal: matcher, then one observe-only model call.
  const instruction = config.target.instruction;
  const notes: string[] = [];
  let found: Found | undefined;
  for (const tier of [() => byMatcher(page, instruction), () => byModel(page, instruction, deps)]) {
    const got = await tier();
    if ('locator' in got) {
      usage = addUsage(usage, got.usage);
      if (got.locator.xpath === actedOn) {
        // The element already acted on: acting again could submit or pay twice.
        notes.push(`${got.via}: points at the element already acted on`);
        break;
      }
      found = got;
      break;
    }
    usage = addUsage(usage, (got as { usage?: Usage }).usage);
    notes.push(got.why);
  }
  const failed = (message: string, resolution: string) =>
    result({
      status: 'failed',
      resolvedBy: usage.calls > 0 ? 'heal-llm' : 'deterministic',
      error: {
        kind: 'deterministic',
        message: redactText(`${node.alias}: ${message}`, secrets),
        resolution,
        selector: config.target.candidates.map(describeCandidate).join(' | '),
        instruction,
      },
    });
  if (!found)
    return failed(
      `element not found (${reason}); heal: ${notes.join('; ')}`,
      'The page changed beyond what the heal could find safely. Record the step again on the new page, or add a candidate that picks out the element.',
    );

  // A heal that lands on one of several look-alikes (same role and name) cannot know it is the one
  // that was meant, whoever pointed at it: right or nothing, so it defers.
  const twins = await lookAlikes(page, found.locator);
  if (twins > 1)
    return failed(
      `element not found (${reason}); heal: ${found.via} pointed at ${found.locator.role} "${found.locator.name}", but ${twins} elements look like it and nothing tells which one was meant; nothing was done`,
      'Record the step again on the new page, or add a candidate (an id, a data-testid) that picks out the element.',
    );

  // Candidates are read before acting: after a click the element may be gone.
  const fresh = (await readCandidates(page, found.locator)) as LocatorCandidate[];
  const done = await perform(page, actionOf(config, found.locator), deps);
  cleared ??= done.cleared;
  const failures = done.ok
    ? await awaitPostConditions(page, conditions, {
        target: found.locator.xpath,
        ...(secrets ? { variables: secrets } : {}),
      })
    : [];
  const heal: HealRecord = {
    alias: node.alias,
    path: run.path,
    url: page.url(),
    old: config.target.candidates,
    new: fresh,
    via: found.via,
    reason: redactText(reason, secrets),
    confirmed: done.ok && failures.length === 0,
  };
  const resolvedBy = found.via === 'llm' ? 'heal-llm' : 'heal-matcher';
  // The evidence says which step healed, from which locators to which, and why (no secrets in it).
  await deps
    .saveEvidence?.(`heal-${node.alias}.json`, JSON.stringify(heal, null, 2), 'application/json')
    .catch((err: unknown) =>
      deps.log?.({ level: 'warn', msg: 'could not save the heal record', error: String(err) }),
    );
  if (!done.ok)
    return {
      ...failed(
        `the healed element could not be used: ${done.message}`,
        'Check the page by hand; the step was not done.',
      ),
      heal,
      resolvedBy,
    };
  if (failures.length)
    return {
      ...failed(
        `healed via ${found.via}, but after the step: ${describeFailures(failures)}`,
        'The heal found an element but the step did not have its recorded effect; it is not written back. Check the page and the post-conditions.',
      ),
      heal,
      resolvedBy,
    };
  return result({
    status: 'ok',
    resolvedBy,
    heal,
    output: { url: page.url(), healed: found.via, ...(cleared ? { cleared } : {}) },
  });
};
