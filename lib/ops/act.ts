import { placeholders } from '../actions/helpers.ts';
import type { Action } from '../actions/types.ts';
import { noModelError } from '../llm/config.ts';
import { diffSnapshots } from '../perception/diff.ts';
import { findByLocator } from '../perception/locate.ts';
import type { Snapshot } from '../perception/types.ts';
import { elementById, wholePage } from '../perception/types.ts';
import { Run } from './act-run.ts';
import { type MatchDecision, matchInstruction } from './matcher/index.ts';
import { type InstructionStep, splitInstruction } from './matcher/steps.ts';
import { formatCandidates } from './matcher/summary.ts';
import { ask, keywordsOf, readPage, userMessage, visionPart } from './page-state.ts';
import { ACT_SYSTEM, actUser, TWO_STEP_SYSTEM, twoStepUser, VISION_NOTE, withGuidance } from './prompts.ts';
import { ActReply } from './replies.ts';
import {
  type ActResult,
  type CacheQuery,
  type Candidate,
  type ObservedElement,
  type OpContext,
  OpError,
  type ResolvedBy,
} from './types.ts';

const LOW_CONFIDENCE = 0.6;

const toAction = (o: ObservedElement): Action => ({
  method: o.method,
  target: { locator: { xpath: o.selector, role: o.role, name: o.name } },
  args: o.arguments,
  description: o.description,
});

const isObserved = (v: unknown): v is ObservedElement =>
  typeof v === 'object' && v !== null && 'selector' in v && 'method' in v && !('target' in v);

/** Asks the model for one action on this snapshot; vision when asked for or when the DOM is not enough. */
async function inferAction(
  run: Run,
  instruction: string,
  snap: Snapshot,
  note?: string,
): Promise<{ action?: Action; twoStep: boolean; reason: string }> {
  const { ctx } = run;
  const llm = ctx.llm!;
  const mode = ctx.options?.vision ?? 'fallback';
  const attempt = async (withImage: boolean) => {
    const image = withImage ? await visionPart(ctx, snap) : undefined;
    const text = actUser(
      instruction,
      snap,
      [note, withImage ? VISION_NOTE : undefined].filter(Boolean).join(' '),
    );
    const res = await ask(
      llm,
      {
        system: withGuidance(ACT_SYSTEM, run.ctx.guidance),
        messages: [userMessage(text, image)],
        schema: ActReply,
        schemaName: 'choose_action',
      },
      run.usage,
      ctx.signal,
    );
    return res.value;
  };
  const firstWithImage = mode === 'always' || (mode === 'fallback' && snap.confidence < LOW_CONFIDENCE);
  let reply = await attempt(firstWithImage);
  const valid = (r: ActReply) => r.elementId === null || !!elementById(snap, r.elementId);
  if ((reply.elementId === null || !valid(reply)) && mode === 'fallback' && !firstWithImage) {
    ctx.log?.({ level: 'info', msg: 'act: no element from the outline, retrying with a screenshot' });
    reply = await attempt(true);
  }
  if (reply.elementId === null) return { twoStep: false, reason: reply.reason };
  if (!valid(reply)) {
    // An id the snapshot never showed is a hallucination: refuse it instead of guessing a neighbour.
    ctx.log?.({
      level: 'warn',
      msg: 'act: model answered an id that is not in the snapshot',
      id: reply.elementId,
    });
    return { twoStep: false, reason: `the model chose [${reply.elementId}], which is not on the page` };
  }
  return {
    action: { method: reply.method, target: { id: reply.elementId }, args: reply.arguments },
    twoStep: reply.twoStep,
    reason: reply.reason,
  };
}

/** After a click opened a custom dropdown: show only what appeared and let the model pick the option. */
async function secondStep(run: Run, instruction: string, before: Snapshot): Promise<boolean> {
  const after = await readPage(run.ctx);
  const diff = diffSnapshots(before, after);
  const appeared = diff.added.length > 0 ? diff.tree : after.tree;
  const res = await ask(
    run.ctx.llm!,
    {
      system: withGuidance(TWO_STEP_SYSTEM, run.ctx.guidance),
      messages: [userMessage(twoStepUser(instruction, appeared))],
      schema: ActReply,
      schemaName: 'choose_option',
    },
    run.usage,
    run.ctx.signal,
  );
  const r = res.value;
  if (r.elementId === null || !elementById(after, r.elementId)) return false;
  const out = await run.exec({ method: r.method, target: { id: r.elementId }, args: r.arguments }, after);
  return out.ok;
}

function candidatesOf(instruction: string, snap: Snapshot): Candidate[] {
  const decision = matchInstruction(instruction, wholePage(snap));
  return decision.kind === 'defer' ? decision.candidates.slice(0, 5) : [];
}

const RETRYABLE = new Set(['not_found', 'not_actionable', 'timeout']);

/**
 * Does what the instruction says. Tiers: cache → matcher → model; a failed model action heals once
 * on a fresh snapshot. Secrets travel as `%name%` until the browser needs the value.
 */
export async function act(ctx: OpContext, input: string | Action | ObservedElement): Promise<ActResult> {
  const run = new Run(ctx);
  if (typeof input !== 'string') {
    const action = isObserved(input) ? toAction(input) : input;
    assertKnownVariables((action.args ?? []).join(' '), ctx.variables);
    const snap = await readPage(ctx);
    await run.exec(action, snap);
    return run.done('direct');
  }
  const instruction = input.trim();
  if (!instruction)
    throw new OpError('invalid', 'instruction is empty: say what to do, e.g. "click the Sign in button"');
  assertKnownVariables(instruction, ctx.variables);
  let snap = await readPage(ctx, { keywords: keywordsOf(instruction) });
  const query: CacheQuery = {
    instruction,
    url: snap.url,
    signature: snap.signature,
    variableNames: [...new Set(placeholders(instruction))].sort(),
    ...(ctx.guidance ? { guidance: ctx.guidance } : {}),
  };

  // Tier 1: a past success, replayed only if every element still is what it was.
  let cacheState: ActResult['cache'];
  if (ctx.cache) {
    const hit = await ctx.cache.lookup(query);
    if (hit) {
      const replay = await replayCached(run, hit.actions, snap);
      if (run.halted) return run.done('cache', { cache: 'hit' });
      if (replay === 'same') return run.done('cache', { cache: 'hit' });
      if (replay === 'moved') {
        const healed = run.done('cache', { cache: 'healed' });
        await ctx.cache.save(query, healed.actions, snap);
        return healed;
      }
      ctx.log?.({
        level: 'info',
        msg: 'act: cached actions no longer fit the page; resolving again',
        key: hit.key,
      });
      cacheState = 'healed';
      run.steps = [];
      snap = await readPage(ctx, { keywords: keywordsOf(instruction) });
    } else cacheState = 'miss';
  }
  const remember = async (by: ResolvedBy): Promise<ActResult> => {
    const result = run.done(by, cacheState ? { cache: cacheState } : {});
    if (result.success && ctx.cache) await ctx.cache.save(query, result.actions, snap);
    else if (!result.success && cacheState === 'healed' && ctx.cache) await ctx.cache.forget(query);
    return result;
  };

  // Compound instructions ("type … into … and press Submit"): every part read plainly, or none.
  const useMatcher = ctx.options?.matcher !== false;
  const steps = useMatcher ? splitInstruction(instruction) : undefined;
  if (steps) {
    const outcome = await runSteps(run, steps, snap);
    if (outcome === 'done') return remember(run.usage.total.calls > 0 ? 'llm' : 'matcher');
    if (outcome !== 'untouched') {
      const result = run.done(
        run.usage.total.calls > 0 ? 'llm' : 'matcher',
        cacheState ? { cache: cacheState } : {},
      );
      return { ...result, success: false, message: outcome, error: { kind: 'not_found', message: outcome } };
    }
    // The first part did not resolve: nothing was done, and the sentence goes on whole.
    run.steps = [];
  }

  // Tier 2: the deterministic matcher, which only answers when sure (of the whole page).
  const whole = wholePage(snap);
  const decision: MatchDecision = useMatcher
    ? matchInstruction(instruction, whole)
    : { kind: 'defer', reason: 'matcher off', candidates: [], ms: 0 };
  if (decision.kind === 'action') {
    const out = await run.exec(decision.action, whole);
    if (out.ok || !ctx.llm || run.halted) return remember('matcher');
    run.steps = [];
    snap = await readPage(ctx, { keywords: keywordsOf(instruction) });
  }

  // Tier 3: the model.
  if (!ctx.llm) {
    const candidates = decision.kind === 'defer' ? decision.candidates.slice(0, 5) : [];
    throw new OpError('no_model', noModelMessage(instruction, candidates), candidates);
  }
  let inferred = await inferAction(run, instruction, snap);
  if (!inferred.action) {
    const err = new OpError(
      'not_found',
      `no element fits "${instruction}" (${inferred.reason})`,
      candidatesOf(instruction, snap),
    );
    err.usage = run.usage.total;
    throw err;
  }
  let out = await run.exec(inferred.action, snap);
  if (run.halted) return remember('llm');
  if (!out.ok && RETRYABLE.has(out.error?.kind ?? '')) {
    // Self-heal: the page may have re-rendered between reading and acting. Read it again, once.
    ctx.log?.({
      level: 'info',
      msg: 'act: action failed, healing on a fresh snapshot',
      kind: out.error?.kind,
    });
    const failed = out.message;
    run.steps = [];
    snap = await readPage(ctx, { keywords: keywordsOf(instruction) });
    inferred = await inferAction(run, instruction, snap, `A previous attempt failed: ${failed}`);
    if (!inferred.action) return remember('llm');
    out = await run.exec(inferred.action, snap);
    if (run.halted) return remember('llm');
  }
  if (out.ok && inferred.twoStep) {
    const picked = await secondStep(run, instruction, snap);
    if (run.halted) return remember('llm');
    if (!picked) {
      const result = run.done('llm');
      return {
        ...result,
        success: false,
        message: `opened the dropdown but found no option for "${instruction}"`,
      };
    }
  }
  return remember('llm');
}

/**
 * Runs the parts of a compound instruction in order, each matched on a fresh snapshot taken after
 * the previous part acted (a part may only exist once the one before it ran). 'untouched' when the
 * first part does not resolve (nothing was done); otherwise 'done', or what was done and what was
 * not, in words. A later part the matcher cannot resolve goes to the model when there is one.
 */
async function runSteps(run: Run, steps: InstructionStep[], first: Snapshot): Promise<string> {
  const { ctx } = run;
  let snap = first;
  const did = () =>
    run.steps
      .filter((s) => s.outcome.ok)
      .map((s) => s.action.description ?? s.action.method)
      .join('; ');
  const notDone = (k: number) =>
    steps
      .slice(k)
      .map((s) => `"${s.text}"`)
      .join(', ');
  for (const [k, step] of steps.entries()) {
    if (k > 0) snap = await readPage(ctx, { keywords: keywordsOf(step.text) });
    const whole = wholePage(snap);
    const decision = matchInstruction(step.text, whole);
    let failure: string | undefined;
    if (decision.kind === 'action') {
      const out = await run.exec(decision.action, whole);
      if (out.ok) continue;
      failure = out.message;
    } else {
      if (k === 0) return 'untouched';
      failure = `${decision.reason}; ${formatCandidates(decision.candidates)}`;
      if (ctx.llm) {
        try {
          const inferred = await inferAction(run, step.text, snap);
          if (inferred.action) {
            const out = await run.exec(inferred.action, snap);
            if (out.ok) continue;
            failure = out.message;
          } else failure = inferred.reason;
        } catch (err) {
          failure = (err as Error).message;
        }
      }
    }
    return `${k === 0 ? 'did nothing' : `did ${did()}`}; step ${k + 1} of ${steps.length} failed (${failure}); not done: ${notDone(k)}`;
  }
  return 'done';
}

/**
 * Replays cached actions, each only after checking its element is still there with the same role
 * and name. Returns 'moved' when an element was found by role + name at a new path (the entry is
 * then rewritten), false when the page no longer fits.
 */
async function replayCached(run: Run, actions: Action[], first: Snapshot): Promise<'same' | 'moved' | false> {
  // A replay checks each element by role and name, as the matcher decides: on the whole page.
  let snap = wholePage(first);
  let moved = false;
  for (const [i, action] of actions.entries()) {
    if (i > 0) snap = wholePage(await readPage(run.ctx));
    const target = action.target;
    if (target && 'locator' in target && typeof target.locator !== 'string') {
      const el = findByLocator(snap, target.locator);
      if (!el) return false;
      if (el.locator.xpath !== target.locator.xpath) moved = true;
      const out = await run.exec({ ...action, target: { id: el.id } }, snap);
      if (!out.ok) return false;
    } else {
      const out = await run.exec(action, snap);
      if (!out.ok) return false;
    }
  }
  if (actions.length === 0) return false;
  return moved ? 'moved' : 'same';
}

/**
 * A `%name%` with no value would be typed literally and look like success: refuse it before
 * anything happens on the page.
 */
export function assertKnownVariables(text: string, variables: Record<string, string> | undefined): void {
  const unknown = [...new Set(placeholders(text))].filter((n) => !variables || !Object.hasOwn(variables, n));
  if (unknown.length === 0) return;
  const known = Object.keys(variables ?? {});
  throw new OpError(
    'invalid',
    `variables: no value for ${unknown.map((n) => `%${n}%`).join(', ')} (send it as variables.${unknown[0]}` +
      `${known.length ? `; known: ${known.join(', ')}` : ''})`,
  );
}

function noModelMessage(instruction: string, candidates: Candidate[]): string {
  const closest = candidates.length
    ? ` Closest elements: ${candidates
        .map(
          (c) => `[${c.id}] ${c.role} "${c.name}"${c.score !== undefined ? ` (${c.score.toFixed(2)})` : ''}`,
        )
        .join(', ')}.`
    : '';
  return `could not resolve "${instruction}" without a model.${closest} ${noModelError().message}`;
}
