import validator from 'asl-validator';
import { describe, expect, it } from 'vitest';
import { awsStateMachine, SLICE_TIMEOUT_SLACK_SECONDS } from '../../infra/aws-state-machine.ts';
import {
  executionArns,
  FUNCTIONS,
  type FunctionName,
  grantsFor,
  QUEUE,
  type StackResources,
  stateMachineGrants,
} from '../../infra/stack.ts';
import { runStateMachine } from '../../infra/state-machine.ts';

const resources: StackResources = {
  tableArn: 'arn:aws:dynamodb:eu-west-1:111122223333:table/runs',
  bucketArn: 'arn:aws:s3:::evidence',
  dlqArn: 'arn:aws:sqs:eu-west-1:111122223333:jobs-dlq',
  outputQueueArn: 'arn:aws:sqs:eu-west-1:111122223333:results',
  jobsQueueArn: 'arn:aws:sqs:eu-west-1:111122223333:jobs',
  stateMachineArn: 'arn:aws:states:eu-west-1:111122223333:stateMachine:runs',
  functionArns: {
    api: 'arn:aws:lambda:eu-west-1:111122223333:function:api',
    plan: 'arn:aws:lambda:eu-west-1:111122223333:function:plan',
    agentSlice: 'arn:aws:lambda:eu-west-1:111122223333:function:agent-slice',
    discover: 'arn:aws:lambda:eu-west-1:111122223333:function:discover',
    merge: 'arn:aws:lambda:eu-west-1:111122223333:function:merge',
    queue: 'arn:aws:lambda:eu-west-1:111122223333:function:queue',
  },
};

const names = Object.keys(FUNCTIONS) as FunctionName[];
const actionsOf = (name: FunctionName) => grantsFor(name, resources).flatMap((g) => g.actions);

describe('stack grants', () => {
  it('never use wildcard actions or resources', () => {
    for (const g of [...names.flatMap((n) => grantsFor(n, resources)), ...stateMachineGrants(resources)]) {
      for (const a of g.actions) expect(a).not.toMatch(/\*/);
      for (const r of g.resources) expect(r === '*' || r.endsWith(':*:*')).toBe(false);
    }
  });

  it('give each function only the services its code calls', () => {
    const services = (n: FunctionName) => [...new Set(actionsOf(n).map((a) => a.split(':')[0]))].sort();
    expect(services('api')).toEqual(['dynamodb', 's3', 'states']);
    expect(services('plan')).toEqual(['dynamodb', 's3']);
    expect(services('agentSlice')).toEqual(['dynamodb', 's3']);
    expect(services('discover')).toEqual(['dynamodb', 's3']);
    expect(services('merge')).toEqual(['dynamodb', 's3']);
    expect(services('queue')).toEqual(['dynamodb', 's3', 'sqs']);
    // Nobody deletes a table item or a stored object: results and evidence are append-only.
    for (const n of names) expect(actionsOf(n).filter((a) => /Delete/.test(a))).toEqual([]);
    expect(
      grantsFor('queue', resources).find((g) => g.actions.includes('sqs:SendMessage'))?.resources,
    ).toEqual([resources.dlqArn, resources.outputQueueArn, resources.jobsQueueArn]);
  });

  it('hold each API key to a call rate shared by every API instance', () => {
    expect(FUNCTIONS.api.environment.BROWSERFN_CALLS_PER_SECOND_PER_KEY).toBe('2');
  });

  it('let the state machine invoke the run functions and not the API or the queue consumer', () => {
    const invoke = stateMachineGrants(resources).find((g) => g.actions.includes('lambda:InvokeFunction'));
    expect(invoke?.resources.sort()).toEqual(
      [
        resources.functionArns.plan,
        resources.functionArns.agentSlice,
        resources.functionArns.discover,
        resources.functionArns.merge,
      ].sort(),
    );
    expect(executionArns(resources.stateMachineArn)).toBe(
      'arn:aws:states:eu-west-1:111122223333:execution:runs:*',
    );
  });

  it('size functions for Chromium and keep slices inside the Lambda timeout', () => {
    for (const n of names) {
      const spec = FUNCTIONS[n];
      expect(spec.timeoutSeconds).toBeLessThanOrEqual(900);
      if (spec.browser) expect(spec.memoryMb).toBeGreaterThanOrEqual(1536);
    }
    // Every function that runs slices stops them with a margin before its own timeout.
    for (const n of ['agentSlice', 'queue'] as const) {
      const sliceMs = Number(FUNCTIONS[n].environment.BROWSERFN_SLICE_MS);
      expect(sliceMs, n).toBeGreaterThan(0);
      expect(sliceMs, n).toBeLessThanOrEqual(FUNCTIONS[n].timeoutSeconds * 1000 - 60_000);
    }
    expect(QUEUE.visibilityTimeoutSeconds).toBeGreaterThanOrEqual(FUNCTIONS.queue.timeoutSeconds * 2);
  });
});

/** Every Task state's Resource, the Map's own loop included. */
function taskResources(asl: Record<string, unknown>): string[] {
  const out: string[] = [];
  for (const state of Object.values(asl.States as Record<string, Record<string, unknown>>)) {
    if (state.Type === 'Task') out.push(state.Resource as string);
    const inner = state.ItemProcessor as Record<string, unknown> | undefined;
    if (inner) out.push(...taskResources(inner));
  }
  return out;
}

describe('deployed state machine', () => {
  const deployed = awsStateMachine(resources.functionArns) as Record<string, unknown>;

  it('is exactly the runs state machine (aws mode) bound to the stack functions', () => {
    expect(deployed).toEqual(
      runStateMachine({
        mode: 'aws',
        sliceTimeoutSeconds: FUNCTIONS.agentSlice.timeoutSeconds + SLICE_TIMEOUT_SLACK_SECONDS,
        functions: {
          plan: resources.functionArns.plan,
          discover: resources.functionArns.discover,
          slice: resources.functionArns.agentSlice,
          merge: resources.functionArns.merge,
        },
      }),
    );
    expect((deployed.States as Record<string, { ItemReader?: unknown }>).Samples?.ItemReader).toBeDefined();
  });

  it('calls only functions of the stack that its role may invoke, and each of them', () => {
    const invocable = stateMachineGrants(resources).find((g) => g.actions.includes('lambda:InvokeFunction'))!;
    const called = new Set(taskResources(deployed));
    const stackArns = new Set(Object.values(resources.functionArns));
    for (const arn of called) {
      expect(stackArns.has(arn)).toBe(true);
      expect(invocable.resources).toContain(arn);
    }
    expect([...called].sort()).toEqual([...invocable.resources].sort());
    // The API and the queue consumer are never called by the state machine.
    expect(called.has(resources.functionArns.api)).toBe(false);
    expect(called.has(resources.functionArns.queue)).toBe(false);
  });

  it('waits for a slice at least as long as the slice Lambda may run', () => {
    const slice = (
      deployed.States as Record<
        string,
        { ItemProcessor?: { States: Record<string, { TimeoutSeconds?: number }> } }
      >
    ).Samples!.ItemProcessor!.States.Slice!;
    expect(slice.TimeoutSeconds).toBeGreaterThan(FUNCTIONS.agentSlice.timeoutSeconds);
  });

  it('passes asl-validator', () => {
    const { isValid, errors } = validator(structuredClone(deployed));
    expect(errors).toEqual([]);
    expect(isValid).toBe(true);
  });
});
