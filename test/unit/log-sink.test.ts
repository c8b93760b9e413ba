/** The log sink (lib/runs/json-log.ts): where the default writers' lines go, set per process. */
import { afterEach, describe, expect, it } from 'vitest';
import { jsonLog, type LogSink, linesTo, setLogSink } from '../../lib/runs/json-log.ts';

let before: LogSink | undefined;
afterEach(() => {
  if (before) setLogSink(before);
  before = undefined;
});

describe('setLogSink', () => {
  it('takes the lines of every default writer, each with the stream it was meant for', () => {
    const got: [string, string][] = [];
    // A writer made before the sink is set still uses it: the sink is looked up per line.
    const toStderr = jsonLog(linesTo('stderr'));
    before = setLogSink((line, stream) => got.push([stream, JSON.parse(line).msg]));
    jsonLog()({ msg: 'slice start' });
    toStderr({ msg: 'op' });
    expect(got).toEqual([
      ['stdout', 'slice start'],
      ['stderr', 'op'],
    ]);
  });

  it('hands back the sink it replaced, so it can be put back', () => {
    const first: string[] = [];
    const second: string[] = [];
    before = setLogSink((l) => first.push(l));
    const replaced = setLogSink((l) => second.push(l));
    linesTo('stdout')('a');
    setLogSink(replaced);
    linesTo('stdout')('b');
    expect([first, second]).toEqual([['b'], ['a']]);
  });
});
