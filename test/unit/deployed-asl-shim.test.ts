import { describe, expect, it } from 'vitest';
import { awsStateMachine } from '../../infra/aws-state-machine.ts';
import type { FunctionName } from '../../infra/stack.ts';
import { runStateMachine, STATE } from '../../infra/state-machine.ts';
import {
  inlineDistributedMaps,
  readerState,
  SHIM_READER_ARN,
  SHIM_WRITER_ARN,
  writerState,
} from '../support/deployed-asl.ts';

const arns = Object.fromEntries(
  (['api', 'plan', 'agentSlice', 'discover', 'merge', 'queue'] as FunctionName[]).map((n) => [
    n,
    `arn:aws:lambda:us-east-1:123456789012:function:browserfn-${n}`,
  ]),
) as Record<FunctionName, string>;

type States = Record<string, Record<string, unknown>>;

describe('the Distributed Map shim', () => {
  const deployed = awsStateMachine(arns);
  const before = JSON.stringify(deployed);
  const { definition, maps } = inlineDistributedMaps(deployed);
  const states = definition.States as States;
  const original = deployed.States as States;

  it('leaves the deployed definition untouched (pure)', () => {
    expect(JSON.stringify(deployed)).toBe(before);
  });

  it('turns the Samples map into reader Task → inline Map → writer Task, with the deployed parameters', () => {
    expect(maps).toEqual([STATE.samples]);
    expect(states[readerState(STATE.samples)]).toEqual({
      Type: 'Task',
      Resource: SHIM_READER_ARN,
      Parameters: { 'Bucket.$': '$.itemsBucket', 'Key.$': '$.itemsKey', ReaderConfig: { InputType: 'JSON' } },
      ResultPath: '$.shimItems',
      Next: STATE.samples,
    });
    const map = states[STATE.samples]!;
    expect(map.ItemReader).toBeUndefined();
    expect(map.ResultWriter).toBeUndefined();
    expect(map.ToleratedFailurePercentage).toBeUndefined();
    expect(map.ItemsPath).toBe('$.shimItems');
    expect((map.ItemProcessor as { ProcessorConfig: unknown }).ProcessorConfig).toEqual({ Mode: 'INLINE' });
    expect(map.Next).toBe(writerState(STATE.samples));
    expect(states[writerState(STATE.samples)]).toMatchObject({
      Resource: SHIM_WRITER_ARN,
      Parameters: { 'Bucket.$': '$.itemsBucket', 'Prefix.$': '$.mapResultsPrefix' },
      Next: STATE.merge,
    });
  });

  it('keeps every other state, and the sample loop inside the Map, exactly as deployed', () => {
    // Discover? and Discover change only where they go next (the test below).
    const retargeted = new Set<string>([STATE.samples, STATE.discoverChoice, STATE.discover]);
    for (const name of Object.keys(original).filter((n) => !retargeted.has(n)))
      expect(states[name], name).toEqual(original[name]);
    const loop = (m: Record<string, unknown>) => {
      const { ProcessorConfig: _p, ...rest } = m.ItemProcessor as Record<string, unknown>;
      return rest;
    };
    expect(loop(states[STATE.samples]!)).toEqual(loop(original[STATE.samples]!));
    expect(states[STATE.samples]!.ItemSelector).toEqual(original[STATE.samples]!.ItemSelector);
    expect(states[STATE.samples]!.MaxConcurrencyPath).toBe('$.concurrency');
  });

  it('points whatever went to the Map at its reader (Discover?, Discover)', () => {
    expect(states[STATE.discoverChoice]!.Default).toBe(readerState(STATE.samples));
    expect(states[STATE.discover]!.Next).toBe(readerState(STATE.samples));
    expect(original[STATE.discover]!.Next).toBe(STATE.samples);
  });

  it('changes nothing in a definition without a Distributed Map (the local variant)', () => {
    const local = runStateMachine({
      mode: 'local',
      functions: { plan: 'p', slice: 's', merge: 'm', discover: 'd' },
    });
    const out = inlineDistributedMaps(local);
    expect(out.maps).toEqual([]);
    expect(out.definition).toEqual(local);
  });
});
