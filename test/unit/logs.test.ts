/** Issue 28 item 5: log lines a person can follow — levels, run and sample ids, op fields only. */
import { describe, expect, it } from 'vitest';
import { opLogFields } from '../../lib/api/op-log.ts';
import { jsonLog, logFor, logLevelFrom } from '../../lib/runs/json-log.ts';

describe('jsonLog', () => {
  it('writes one JSON object per line at the level asked, and drops lines below it', () => {
    const lines: string[] = [];
    const log = jsonLog((l) => lines.push(l), 'info');
    log({ level: 'debug', msg: 'noise' });
    log({ msg: 'slice start', runId: 'r1' });
    log({ level: 'warn', msg: 'slow' });
    expect(lines.map((l) => JSON.parse(l))).toMatchObject([
      { level: 'info', msg: 'slice start', runId: 'r1' },
      { level: 'warn', msg: 'slow' },
    ]);
    const verbose: string[] = [];
    jsonLog((l) => verbose.push(l), 'debug')({ level: 'debug', msg: 'noise' });
    expect(verbose).toHaveLength(1);
  });

  it('reads BROWSERFN_LOG_LEVEL, refusing an unknown level by name', () => {
    expect(logLevelFrom(undefined)).toBe('info');
    expect(logLevelFrom('DEBUG')).toBe('debug');
    expect(() => logLevelFrom('loud')).toThrow(
      /BROWSERFN_LOG_LEVEL: expected debug, info, warn or error, got "loud"/,
    );
  });

  it('logFor puts the run and sample on every line, over whatever the caller wrote', () => {
    const lines: Record<string, unknown>[] = [];
    const log = logFor((e: { msg: string; [k: string]: unknown }) => lines.push(e), {
      runId: 'r1',
      sampleId: 's7',
    });
    log({ msg: 'tool failed', step: 3 });
    log({ msg: 'stale ids', runId: 'other' });
    expect(lines).toEqual([
      { msg: 'tool failed', step: 3, runId: 'r1', sampleId: 's7' },
      { msg: 'stale ids', runId: 'r1', sampleId: 's7' },
    ]);
  });
});

describe('opLogFields', () => {
  it('takes tokens, the tier and the error kind from an answer, and nothing else', () => {
    const answer = {
      success: true,
      message: 'typed %password% into the Password field',
      data: { secretish: 'page text' },
      usage: { promptTokens: 120, completionTokens: 30, model: 'm' },
      resolvedBy: 'llm',
    };
    expect(opLogFields(answer)).toEqual({ tokens: 150, resolvedBy: 'llm' });
    expect(opLogFields({ error: { kind: 'no_model', message: 'x', usage: { promptTokens: 5 } } })).toEqual({
      tokens: 5,
      errorKind: 'no_model',
    });
    expect(opLogFields('not json')).toEqual({});
  });
});
