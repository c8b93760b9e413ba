/**
 * Exploratory mode: given a journey goal and a start page, the model explores on its own, one
 * decision per iteration (the scenario runner's commands), naming the user journey each decision
 * belongs to. Every journey is recorded as a scenario (spec.ts shape) with the commands that ran,
 * so it can be replayed by the runner or compiled into a zero-token workflow. A journey counts as
 * found only when a verification proved its end. Each new journey starts again from the page the
 * shared set-up (journey "setup": logging in) ended on. Test credentials are `%variables%`: the
 * model sees their names only. A CAPTCHA, or a login form when no credentials were given, ends the
 * exploration `stuck` without asking the model (the page is read in one in-page check).
 */
import type { Page } from 'playwright-core';
import { z } from 'zod';
import type { LlmClient, Usage } from '../llm/types.ts';
import { addUsage, emptyUsage, LlmError } from '../llm/types.ts';
import { redactText } from '../perception/redact.ts';
import { snapshot } from '../perception/snapshot.ts';
import { clearBlockers } from './blockers.ts';
import { describeResults, type RecordedCommand, runCommands } from './commands.ts';
import { type CompiledScenario, compileScenario } from './compile.ts';
import { type Command, DecisionSchema } from './decision.ts';
import { EXPLORE_SYSTEM, explorePrompt } from './explore-prompt.ts';
import { addExperiences, experiencesFor, type ScenarioMemory } from './memory.ts';
import type { ScenarioResult } from './run-scenario.ts';
import type { Scenario, ScenarioStep } from './spec.ts';

export const SETUP = 'setup';
const DEFAULT_MAX_ITERATIONS = 20;

export const ExploreDecisionSchema = z.object({
  reasoning: z.string().describe('what you see, what you explore next and why'),
  status: z
    .enum(['continue', 'complete', 'stuck'])
    .describe('complete: the goal is covered (every journey it asks for found); stuck: you cannot go on'),
  journey: z
    .string()
    .describe(
      'kebab-case id of the user journey these commands belong to (e.g. add-note); "setup" for what every journey needs first (logging in)',
    ),
  step: z
    .string()
    .describe('these commands as one plain-language scenario step, e.g. "Add a note saying Tea"'),
  journeyDone: z
    .boolean()
    .describe('this journey reached its end and a verification command in this decision proves it'),
  commands: DecisionSchema.shape.commands,
  noteToFutureSelf: DecisionSchema.shape.noteToFutureSelf,
  experiences: DecisionSchema.shape.experiences,
  blockerDetected: DecisionSchema.shape.blockerDetected,
});
export type ExploreDecision = z.infer<typeof ExploreDecisionSchema>;

export interface Journey {
  id: string;
  /** complete: its end was proved; incomplete: left before that. */
  status: 'complete' | 'incomplete';
  /** The journey as a scenario (the set-up steps first): replayable by the runner. */
  scenario: Scenario;
  /** The commands that ran, by scenario step: what compiles into a workflow. */
  recorded: RecordedCommand[];
  startUrl: string;
}

export type ExploreStatus = 'complete' | 'stuck' | 'budget' | 'failed';

export interface ExploreIteration {
  iteration: number;
  url: string;
  journey: string;
  step: string;
  reasoning: string;
  asked: ExploreDecision['status'];
  results: string[];
  note?: string;
}

export interface ExploreResult {
  status: ExploreStatus;
  reason?: string;
  journeys: Journey[];
  iterations: ExploreIteration[];
  usage: Usage;
  startUrl: string;
  url: string;
  memory: ScenarioMemory;
}

export interface ExploreDeps {
  /** The page, already on the start URL. */
  page: Page;
  llm: LlmClient;
  goal: string;
  /** Test credentials and data: the model types them as %name%, never sees the values. */
  variables?: Record<string, string>;
  checkNavigation?: (url: string) => Promise<void>;
  memory?: ScenarioMemory;
  maxIterations?: number;
  deadline?: number;
  signal?: AbortSignal;
  onIteration?: (it: ExploreIteration) => void;
}

/** What stops an explorer that must not guess: a CAPTCHA, or a login it has no credentials for. */
export async function findGate(page: Page, hasCredentials: boolean): Promise<string | undefined> {
  const seen = await page
    .evaluate(() => {
      const shown = (el: Element) => {
        const r = el.getBoundingClientRect();
        const s = getComputedStyle(el);
        return r.width > 0 && r.height > 0 && s.visibility !== 'hidden' && s.display !== 'none';
      };
      const any = (sel: string) => [...document.querySelectorAll(sel)].some(shown);
      return {
        captcha: any(
          'iframe[src*="recaptcha"], iframe[src*="hcaptcha"], iframe[src*="challenges.cloudflare.com"], .g-recaptcha, .h-captcha, .cf-turnstile, [data-sitekey]',
        ),
        password: any('input[type=password]'),
      };
    })
    .catch(() => ({ captcha: false, password: false }));
  if (seen.captcha) return `a CAPTCHA at ${page.url()}: an explorer does not solve CAPTCHAs`;
  if (seen.password && !hasCredentials)
    return `a login form at ${page.url()} and no test credentials (give them as variables, typed as %name%)`;
  return undefined;
}

/** A journey id as kebab-case. Pure. */
export const journeyId = (raw: string) =>
  raw
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, '-')
    .replace(/^-+|-+$/g, '')
    .slice(0, 60) || 'journey';

interface Draft {
  id: string;
  steps: ScenarioStep[];
  recorded: RecordedCommand[];
  done: boolean;
}

export async function explore(deps: ExploreDeps): Promise<ExploreResult> {
  const { page, llm } = deps;
  const secrets = deps.variables;
  const variableNames = Object.keys(secrets ?? {});
  const maxIterations = deps.maxIterations ?? DEFAULT_MAX_ITERATIONS;
  let memory: ScenarioMemory = deps.memory ?? {};
  let usage = emptyUsage(llm.model);
  const startUrl = page.url();
  let baseUrl = startUrl;
  const setup: Draft = { id: SETUP, steps: [], recorded: [], done: true };
  const drafts: Draft[] = [];
  let current: Draft | undefined;
  const iterations: ExploreIteration[] = [];
  let note: string | undefined;
  let lastResults: string[] = [];
  let notice: string | undefined;

  const journeys = (): Journey[] =>
    drafts.map((d) => {
      const steps = [...setup.steps, ...d.steps];
      return {
        id: d.id,
        status: d.done ? 'complete' : 'incomplete',
        scenario: { steps: steps.length ? steps : [{ do: 'Open the start page' }] },
        recorded: [
          ...setup.recorded,
          ...d.recorded.map((r) => ({ ...r, step: r.step + setup.steps.length })),
        ],
        startUrl,
      };
    });
  const end = (status: ExploreStatus, reason?: string): ExploreResult => ({
    status,
    ...(reason ? { reason: redactText(reason, secrets) } : {}),
    journeys: journeys(),
    iterations,
    usage,
    startUrl,
    url: redactText(page.url(), secrets),
    memory,
  });

  for (let iteration = 1; iteration <= maxIterations; iteration++) {
    if (deps.signal?.aborted || (deps.deadline !== undefined && Date.now() >= deps.deadline))
      return end('failed', 'the deadline passed before the exploration ended');
    const cleared = (await clearBlockers(page, [])).map((c) => c.what);
    const gate = await findGate(page, variableNames.length > 0);
    if (gate) return end('stuck', gate);
    const snap = await snapshot(page, { budget: 3000, ...(secrets ? { secrets } : {}) });
    let reply: Awaited<ReturnType<typeof llm.generate<ExploreDecision>>>;
    try {
      reply = await llm.generate({
        system: EXPLORE_SYSTEM,
        messages: [
          {
            role: 'user',
            content: explorePrompt({
              goal: deps.goal,
              iteration,
              maxIterations,
              journeys: drafts.map((d) => ({ id: d.id, done: d.done, steps: d.steps.map((s) => s.do) })),
              setup: setup.steps.map((s) => s.do),
              ...(current ? { current: current.id } : {}),
              ...(note ? { note } : {}),
              ...(notice ? { notice } : {}),
              lastResults,
              cleared,
              experiences: experiencesFor(memory, page.url()),
              variableNames,
              url: snap.url,
              title: snap.title,
              tree: snap.tree,
            }),
          },
        ],
        schema: ExploreDecisionSchema,
        schemaName: 'explore_decision',
        ...(deps.signal ? { signal: deps.signal } : {}),
      });
    } catch (err) {
      if (err instanceof LlmError && err.usage) usage = addUsage(usage, err.usage);
      return end('failed', `the model call failed: ${(err as Error).message}`);
    }
    usage = addUsage(usage, reply.usage);
    const d = reply.value;
    notice = undefined;
    const id = d.journey.trim().toLowerCase() === SETUP ? SETUP : journeyId(d.journey);
    const record = (results: string[], extra?: string) => {
      const it: ExploreIteration = {
        iteration,
        url: redactText(snap.url, secrets),
        journey: id,
        step: redactText(d.step, secrets),
        reasoning: redactText(d.reasoning, secrets),
        asked: d.status,
        results,
        ...(extra ? { note: extra } : {}),
      };
      iterations.push(it);
      deps.onIteration?.(it);
    };
    if (d.status === 'stuck') {
      record([]);
      return end('stuck', d.reasoning);
    }
    // A new journey starts from the base page; commands decided elsewhere are not run.
    const target = id === SETUP ? setup : drafts.find((j) => j.id === id && !j.done);
    if (id !== SETUP && !target && page.url() !== baseUrl && d.commands.length) {
      await page.goto(baseUrl, { waitUntil: 'load' });
      notice = `A new journey ("${id}") starts from ${baseUrl}: the page was reset there, decide again.`;
      record([], 'reset to the start page for a new journey');
      continue;
    }
    const all: Command[] = [...(d.blockerDetected?.clearingCommands ?? []), ...d.commands];
    let journey = target;
    // A decision without commands (done, or only looking) opens no journey.
    if (!journey && id !== SETUP && all.length) {
      const taken = drafts.filter((j) => j.id === id || j.id.startsWith(`${id}-`)).length;
      journey = { id: taken ? `${id}-${taken + 1}` : id, steps: [], recorded: [], done: false };
      drafts.push(journey);
    }
    if (journey && journey !== setup) current = journey;
    const stepIndex = journey?.steps.length ?? 0;
    const ran = await runCommands(
      {
        page,
        snap,
        step: stepIndex,
        ...(secrets ? { variables: secrets } : {}),
        ...(deps.checkNavigation ? { checkNavigation: deps.checkNavigation } : {}),
      },
      all,
    );
    memory = addExperiences(memory, snap.url, d.experiences);
    lastResults = describeResults(ran.results);
    note = d.noteToFutureSelf || undefined;
    const ok = ran.results.every((r) => r.ok);
    const proved = ran.results.some((r) => r.ok && r.command.kind === 'verify');
    const kept = ran.recorded.filter((r) => r.kind === 'action' || r.ok);
    // What changed the page is recorded even when a later command failed: the replay must match.
    if (journey && kept.length) {
      const checks = ran.results
        .filter((r) => r.ok && r.command.kind === 'verify')
        .map((r) =>
          r.command.kind === 'verify'
            ? (r.command.description ?? `${r.command.check} ${r.command.expected ?? ''}`.trim())
            : '',
        );
      journey.steps.push({
        do: d.step.trim() || 'Continue',
        ...(checks.length ? { expect: checks.join('; ') } : {}),
      });
      journey.recorded.push(...kept);
      if (journey === setup) baseUrl = page.url();
    }
    let extra: string | undefined;
    if (d.journeyDone && journey && journey !== setup) {
      if (ok && proved) {
        journey.done = true;
        current = undefined;
        if (page.url() !== baseUrl) await page.goto(baseUrl, { waitUntil: 'load' });
        notice = `Journey "${journey.id}" recorded. The page is back at ${baseUrl} for the next one.`;
      } else {
        extra = `journeyDone refused: ${ok ? 'no verification proved the end of the journey' : 'a command failed'}`;
        notice = `Your journeyDone was not accepted: ${extra.slice(18)}.`;
      }
    }
    record(lastResults, extra);
    if (d.status === 'complete') {
      if (ok && drafts.some((j) => j.done)) return end('complete');
      notice = `"complete" refused: ${ok ? 'no journey has been proved yet' : 'a command failed'}.`;
    }
  }
  return end('budget', `no end after ${maxIterations} iterations`);
}

/** A found journey as the scenario result the workflow compiler takes. Pure. */
export function journeyResult(journey: Journey): ScenarioResult {
  return {
    status: journey.status === 'complete' ? 'passed' : 'failed',
    steps: journey.scenario.steps.map((s, index) => ({
      index,
      do: s.do,
      ...(s.expect ? { expect: s.expect } : {}),
      status: 'complete',
      iterations: 1,
      verifications: [],
    })),
    iterations: [],
    recorded: journey.recorded,
    usage: emptyUsage(),
    startUrl: journey.startUrl,
    url: journey.startUrl,
    memory: {},
  };
}

/** A complete journey as a workflow that replays it with zero tokens (lib/scenarios/compile.ts). */
export function compileJourney(
  journey: Journey,
  opts: { input?: Record<string, string> } = {},
): CompiledScenario {
  return compileScenario(journeyResult(journey), { name: `journey: ${journey.id}`, ...opts });
}
