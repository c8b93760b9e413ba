import { describe, expect, it } from 'vitest';
import { errorEvent, finishedEvent, logEvent, respond } from '../../lib/api/stagehand/sse.ts';

/** The event stream a Stagehand SDK call is answered with: its chunks, and when they are sent. */

describe('event stream', () => {
  it('writes data: lines only, one JSON object each', () => {
    for (const chunk of [
      logEvent({ category: 'x', message: 'working', level: 1 }),
      finishedEvent({ ok: 1 }),
      finishedEvent(undefined),
      errorEvent({ status: 403, kind: 'blocked', message: 'no' }),
    ]) {
      expect(chunk.startsWith('data: ')).toBe(true);
      expect(chunk.endsWith('\n\n')).toBe(true);
      expect(chunk.slice(6, -2)).not.toContain('\n');
      JSON.parse(chunk.slice(6));
    }
    expect(JSON.parse(finishedEvent(undefined).slice(6)).data).toEqual({ status: 'finished', result: null });
    expect(
      JSON.parse(errorEvent({ status: 501, kind: 'not_implemented', message: 'm' }).slice(6)).data,
    ).toEqual({
      status: 'error',
      error: 'm',
      kind: 'not_implemented',
    });
  });
});

describe('answering a streamed call', () => {
  type Event = { type: string; data: { status: string; message?: { message: string }; result?: unknown } };
  const eventsIn = (text: string): Event[] =>
    text
      .split('\n\n')
      .filter(Boolean)
      .map((c) => JSON.parse(c.slice('data: '.length)) as Event);
  const failure = (err: unknown) => ({ status: 500 as const, kind: 'internal', message: String(err) });
  const line = (message: string) => ({ category: 'test', message, level: 1 as const });

  it('sends a quick call as one body: starting, its log lines, then finished', async () => {
    const res = await respond(
      true,
      async (emit) => {
        emit.log(line('reading the page'));
        emit.log(line('matched'));
        return [{ selector: 'xpath=/html/body/button' }];
      },
      failure,
    );
    expect(res.headers.get('content-type')).toBe('text/event-stream');
    // All of it in the first read: the client wakes once.
    const first = await res.body!.getReader().read();
    const events = eventsIn(new TextDecoder().decode(first.value));
    expect(events.map((e) => e.data.status)).toEqual(['starting', 'running', 'running', 'finished']);
    expect(events[1]!.data.message!.message).toBe('reading the page');
    expect(events[3]!.data.result).toEqual([{ selector: 'xpath=/html/body/button' }]);
  });

  it('streams a slow call: its log lines arrive while it is still working', async () => {
    let finish!: () => void;
    const stillWorking = new Promise<void>((r) => {
      finish = r;
    });
    const res = await respond(
      true,
      async (emit) => {
        emit.log(line('step 1'));
        await stillWorking;
        emit.log(line('step 2'));
        return { done: true };
      },
      failure,
      10,
    );
    const reader = res.body!.getReader();
    const dec = new TextDecoder();
    let seen = '';
    while (!seen.includes('step 1')) seen += dec.decode((await reader.read()).value);
    expect(seen).not.toContain('finished');
    finish();
    for (;;) {
      const { value, done } = await reader.read();
      if (done) break;
      seen += dec.decode(value);
    }
    const events = eventsIn(seen);
    expect(events.map((e) => e.data.status)).toEqual(['starting', 'running', 'running', 'finished']);
    expect(events[2]!.data.message!.message).toBe('step 2');
  });

  it('keeps a long silent call alive with running events, and sends none after finished', async () => {
    const started = performance.now();
    const res = await respond(
      true,
      async () => {
        await new Promise((r) => setTimeout(r, 130));
        return { done: true };
      },
      failure,
      5,
      40,
    );
    const events = eventsIn(await res.text());
    const elapsed = performance.now() - started;
    const kinds = events.map((e) => `${e.type}:${e.data.status}`);
    expect(kinds[0]).toBe('system:starting');
    expect(kinds.at(-1)).toBe('system:finished');
    // One beat per 40 ms of silence: at least one in a 130 ms call (the 40 ms timer is due first
    // however late the loop turns), and never more than the time that passed allows.
    const beats = kinds.filter((k) => k === 'system:running').length;
    expect(beats).toBeGreaterThanOrEqual(1);
    expect(beats).toBeLessThanOrEqual(Math.ceil(elapsed / 40));
  });

  it('ends a failed call with one error event and no finished', async () => {
    for (const holdMs of [50, 0]) {
      const res = await respond(
        true,
        async () => {
          await new Promise((r) => setTimeout(r, 5));
          throw new Error('the page went away');
        },
        failure,
        holdMs,
      );
      const events = eventsIn(await res.text());
      expect(events.map((e) => e.data.status)).toEqual(['starting', 'error']);
      expect(JSON.stringify(events[1])).toContain('the page went away');
    }
  });

  it('tells a streaming call that its client went away', async () => {
    let aborted!: (v: boolean) => void;
    const sawAbort = new Promise<boolean>((r) => {
      aborted = r;
    });
    const res = await respond(
      true,
      (emit) =>
        new Promise((resolve) => {
          emit.signal.addEventListener('abort', () => {
            aborted(true);
            resolve(null);
          });
        }),
      failure,
      0,
    );
    await res.body!.cancel();
    expect(await sawAbort).toBe(true);
  });
});
