/**
 * The nodes that may spend tokens: `browser_ai_action` (act), `browser_ai_query` (extract, observe,
 * assess), `cognition` (reasoning over data, no page) and `agent` (the agent on a sub-goal). Each
 * result carries the model's usage and which tier answered.
 */
import { z } from 'zod';
import { emptyUsage } from '../../llm/types.ts';
import { act } from '../../ops/act.ts';
import { extract } from '../../ops/extract.ts';
import { observe } from '../../ops/observe.ts';
import { type OpContext, OpError } from '../../ops/types.ts';
import type { Json } from '../../store/ports.ts';
import { evaluate } from '../expressions.ts';
import type { NodeResult, NodeRun } from '../types.ts';
import { aiError, failed, noModelError, ok } from './result.ts';

const contextOf = (run: NodeRun): OpContext => ({
  page: run.deps.page,
  ...(run.deps.llm ? { llm: run.deps.llm } : {}),
  ...(run.deps.variables ? { variables: run.deps.variables } : {}),
  ...(run.deps.checkNavigation ? { checkNavigation: run.deps.checkNavigation } : {}),
});

const opFailure = (err: unknown) => {
  const e = err as Error & { usage?: NodeResult['usage'] };
  return { message: e.message.split('\n')[0] ?? String(err), usage: e.usage ?? emptyUsage() };
};

export async function runAiAction(run: NodeRun): Promise<NodeResult> {
  const started = performance.now();
  const { node } = run;
  if (node.type !== 'browser_ai_action') throw new Error(`${node.alias}: not an AI action`);
  const c = node.config;
  const hints = c.constraints?.length ? ` (${c.constraints.join('; ')})` : '';
  const instruction =
    c.action === 'type'
      ? `type "${c.text ?? ''}" into ${c.instruction}${hints}`
      : `${c.action === 'click' ? 'click ' : ''}${c.instruction}${hints}`;
  try {
    const res = await act(contextOf(run), instruction);
    const by = res.resolvedBy === 'direct' ? 'deterministic' : res.resolvedBy;
    if (!res.success) {
      if (res.error?.kind === 'no_model')
        return failed(node, started, noModelError(c.instruction), by, res.usage);
      return failed(node, started, aiError(res.error?.message ?? res.message, c.instruction), by, res.usage);
    }
    return ok(node, started, { done: res.actionDescription, url: res.url }, by, res.usage);
  } catch (err) {
    const f = opFailure(err);
    return failed(node, started, aiError(f.message, c.instruction), 'llm', f.usage);
  }
}

const Assessment = z.object({
  met: z.boolean().describe('whether the page is in the expected state'),
  observed: z.string().describe('what the page shows, in one sentence'),
});

export async function runAiQuery(run: NodeRun): Promise<NodeResult> {
  const started = performance.now();
  const { node, deps } = run;
  if (node.type !== 'browser_ai_query') throw new Error(`${node.alias}: not an AI query`);
  const c = node.config;
  try {
    if (c.method === 'extract') {
      const res = await extract(contextOf(run), c.instruction, c.schema);
      return ok(
        node,
        started,
        res.data as Json,
        res.resolvedBy === 'direct' ? 'deterministic' : res.resolvedBy,
        res.usage,
      );
    }
    if (c.method === 'observe') {
      const res = await observe(contextOf(run), c.instruction);
      const found = res.elements.map((e) => ({
        description: e.description,
        selector: e.selector,
        method: e.method,
        role: e.role,
        name: e.name,
      }));
      return ok(
        node,
        started,
        found as Json,
        res.resolvedBy === 'direct' ? 'deterministic' : res.resolvedBy,
        res.usage,
      );
    }
    if (!deps.llm) return failed(node, started, noModelError(c.instruction), 'llm');
    const page = await extract(
      contextOf(run),
      `${c.instruction}. Is the page in this state: ${c.expected ?? c.instruction}?`,
      Assessment,
    );
    const v = page.data as z.infer<typeof Assessment>;
    if (!v.met)
      return failed(
        node,
        started,
        aiError(`the page is not as expected: ${v.observed}`, c.instruction),
        'llm',
        page.usage,
      );
    return ok(node, started, { met: true, observed: v.observed }, 'llm', page.usage);
  } catch (err) {
    const f = opFailure(err);
    if (err instanceof OpError && err.kind === 'no_model')
      return failed(node, started, noModelError(c.instruction), 'llm', f.usage);
    return failed(node, started, aiError(f.message, c.instruction), 'llm', f.usage);
  }
}

export async function runCognition(run: NodeRun): Promise<NodeResult> {
  const started = performance.now();
  const { node, deps } = run;
  if (node.type !== 'cognition') throw new Error(`${node.alias}: not a cognition node`);
  const c = node.config;
  if (!deps.llm) return failed(node, started, noModelError(c.instruction), 'llm');
  const data = c.input ? await evaluate(c.input, run.scope) : run.scope;
  const schema = c.schema
    ? z.object({ result: z.fromJSONSchema(c.schema as Parameters<typeof z.fromJSONSchema>[0]) })
    : z.object({ result: z.unknown() });
  try {
    const res = await deps.llm.generate({
      system:
        'You reason over the data you are given to answer one instruction. Use only that data; say so in the answer when it is not enough.',
      messages: [
        {
          role: 'user',
          content: `Instruction: ${c.instruction}\n\nData:\n${JSON.stringify(data).slice(0, 60_000)}`,
        },
      ],
      schema,
      schemaName: 'cognition',
      maxTokens: 2048,
    });
    return ok(node, started, ((res.value as { result?: unknown }).result ?? null) as Json, 'llm', res.usage);
  } catch (err) {
    const f = opFailure(err);
    return failed(node, started, aiError(f.message, c.instruction), 'llm', f.usage);
  }
}

export async function runAgentNode(run: NodeRun): Promise<NodeResult> {
  const started = performance.now();
  const { node, deps } = run;
  if (node.type !== 'agent') throw new Error(`${node.alias}: not an agent node`);
  const c = node.config;
  if (!deps.runAgent)
    return failed(node, started, {
      kind: 'ai',
      message: 'no agent is available where this workflow runs',
      instruction: c.goal,
      resolution: 'run the workflow where the agent is configured (a run, the API or the CLI with a model)',
    });
  const res = await deps.runAgent(c.goal, {
    ...(c.maxSteps ? { maxSteps: c.maxSteps } : {}),
    ...(c.schema ? { schema: c.schema } : {}),
    ...(c.requiredFields ? { requiredFields: c.requiredFields } : {}),
  });
  return res.ok
    ? ok(node, started, res.data, 'agent', res.usage)
    : failed(
        node,
        started,
        aiError(`the agent did not reach the goal: ${res.reason}`, c.goal),
        'agent',
        res.usage,
      );
}
