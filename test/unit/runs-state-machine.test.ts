import validator from 'asl-validator';
import { describe, expect, it } from 'vitest';
import { LOCAL_FUNCTIONS, runStateMachine, STATE } from '../../infra/state-machine.ts';

const AWS_FUNCTIONS = {
  plan: 'arn:aws:lambda:eu-west-1:123456789012:function:bfn-plan',
  slice: 'arn:aws:lambda:eu-west-1:123456789012:function:bfn-agent-slice',
  merge: 'arn:aws:lambda:eu-west-1:123456789012:function:bfn-merge',
  discover: 'arn:aws:lambda:eu-west-1:123456789012:function:bfn-discover',
};

type State = Record<string, unknown> & { Type: string };
const statesOf = (asl: Record<string, unknown>) => asl.States as Record<string, State>;
const loopOf = (asl: Record<string, unknown>) =>
  (statesOf(asl)[STATE.samples]!.ItemProcessor as { States: Record<string, State> }).States;

describe('run state machine (ASL)', () => {
  for (const mode of ['aws', 'local'] as const) {
    it(`${mode}: asl-validator accepts it`, () => {
      const asl = runStateMachine({ mode, functions: mode === 'aws' ? AWS_FUNCTIONS : LOCAL_FUNCTIONS });
      // The validator writes defaults into what it checks; give it a copy.
      const { isValid, errors } = validator(structuredClone(asl));
      expect(errors).toEqual([]);
      expect(isValid).toBe(true);
    });
  }

  it('the validator does catch a broken definition (a loop to a state that does not exist)', () => {
    const asl = runStateMachine({ mode: 'local', functions: LOCAL_FUNCTIONS });
    loopOf(asl)[STATE.ended]!.Default = 'Nowhere';
    expect(validator(structuredClone(asl)).isValid).toBe(false);
  });

  it('plan is optional: the Choice goes to Plan only when the input has a prompt', () => {
    const states = statesOf(runStateMachine({ mode: 'local', functions: LOCAL_FUNCTIONS }));
    expect(states[STATE.planChoice]).toMatchObject({
      Type: 'Choice',
      Choices: [{ Variable: '$.prompt', IsPresent: true, Next: STATE.plan }],
      Default: STATE.discoverChoice,
    });
    expect(states[STATE.plan]!.Next).toBe(STATE.discoverChoice);
    // Discover is optional the same way: only when the input says the samples are still to be found.
    expect(states[STATE.discoverChoice]).toMatchObject({
      Type: 'Choice',
      Choices: [{ Variable: '$.discovery', IsPresent: true, Next: STATE.discover }],
      Default: STATE.samples,
    });
    expect(states[STATE.discover]).toMatchObject({ Type: 'Task', Resource: LOCAL_FUNCTIONS.discover });
    expect(states[STATE.discover]!.Next).toBe(STATE.samples);
    expect(states[STATE.samples]!.Next).toBe(STATE.merge);
    expect(states[STATE.merge]!.End).toBe(true);
  });

  it('each sample loops Slice → Choice until final; a crash is caught into Record crash', () => {
    const loop = loopOf(
      runStateMachine({ mode: 'local', functions: LOCAL_FUNCTIONS, sliceTimeoutSeconds: 120 }),
    );
    const slice = loop[STATE.slice]!;
    expect(slice.TimeoutSeconds).toBe(120);
    expect(slice.Next).toBe(STATE.ended);
    expect(slice.Catch).toEqual([{ ErrorEquals: ['States.ALL'], ResultPath: '$.error', Next: STATE.crash }]);
    const retry = slice.Retry as { ErrorEquals: string[]; BackoffRate?: number }[];
    expect(retry[0]!.ErrorEquals).toContain('Lambda.TooManyRequestsException');
    expect(retry[0]!.BackoffRate).toBeGreaterThan(1);
    expect(loop[STATE.ended]).toMatchObject({
      Choices: [
        {
          And: [
            { Variable: '$.slice.final', BooleanEquals: true },
            { Variable: '$.slice.judge', IsPresent: true },
            { Variable: '$.slice.judge', BooleanEquals: true },
          ],
          Next: STATE.judge,
        },
        { Variable: '$.slice.final', BooleanEquals: true, Next: STATE.sampleDone },
      ],
      Default: STATE.slice,
    });
    expect(loop[STATE.crash]!.Next).toBe(STATE.sampleDone);
    // The Judge state is the slice function asked to judge; its failure never fails the sample.
    expect(loop[STATE.judge]).toMatchObject({
      Parameters: { 'tenant.$': '$.tenant', 'runId.$': '$.runId', 'sampleId.$': '$.sampleId', judge: true },
      Next: STATE.sampleDone,
      Catch: [{ ErrorEquals: ['States.ALL'], ResultPath: '$.judgeError', Next: STATE.sampleDone }],
    });
    // The state that travels is ids only, never the agent's state.
    expect(slice.Parameters).toEqual({
      'tenant.$': '$.tenant',
      'runId.$': '$.runId',
      'sampleId.$': '$.sampleId',
    });
  });

  it('aws: Distributed Map reading sample ids from S3, tolerated failures, concurrency from the input', () => {
    const map = statesOf(
      runStateMachine({ mode: 'aws', functions: AWS_FUNCTIONS, toleratedFailurePercentage: 10 }),
    )[STATE.samples]!;
    expect(map.ItemReader).toMatchObject({ Resource: 'arn:aws:states:::s3:getObject' });
    expect((map.ItemProcessor as { ProcessorConfig: unknown }).ProcessorConfig).toEqual({
      Mode: 'DISTRIBUTED',
      ExecutionType: 'STANDARD',
    });
    expect(map.ToleratedFailurePercentage).toBe(10);
    expect(map.MaxConcurrencyPath).toBe('$.concurrency');
    expect(map.ResultPath).toBeNull();
  });

  it('local: inline Map over the ids in the input', () => {
    const map = statesOf(runStateMachine({ mode: 'local', functions: LOCAL_FUNCTIONS }))[STATE.samples]!;
    expect(map.ItemsPath).toBe('$.items');
    expect(map.ItemReader).toBeUndefined();
    expect((map.ItemProcessor as { ProcessorConfig: unknown }).ProcessorConfig).toEqual({ Mode: 'INLINE' });
  });
});
