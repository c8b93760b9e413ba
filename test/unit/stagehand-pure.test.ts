import { describe, expect, it } from 'vitest';
import {
  type CdpCommand,
  filterResult,
  judgeCommand,
  judgeEvent,
  navigableScheme,
  newFilterState,
} from '../../lib/api/stagehand/cdp-filter.ts';
import { SessionLimitError, SessionRegistry } from '../../lib/api/stagehand/sessions.ts';

const CTX = 'CTX-OURS';
const cmd = (method: string, params: Record<string, unknown> = {}, sessionId?: string): CdpCommand => ({
  id: 1,
  method,
  params,
  ...(sessionId ? { sessionId } : {}),
});

describe('CDP filter: commands', () => {
  it('refuses whatever reaches past the session’s context', () => {
    const s = newFilterState(CTX);
    s.sessions.add('S1');
    const refused: [string, Record<string, unknown>, string?][] = [
      ['Target.createBrowserContext', {}],
      ['Target.disposeBrowserContext', { browserContextId: CTX }],
      ['Target.attachToBrowserTarget', {}],
      ['Target.exposeDevToolsProtocol', { targetId: 'T' }],
      ['Browser.grantPermissions', { permissions: ['geolocation'] }],
      ['Browser.setPermission', { permission: { name: 'camera' }, setting: 'granted' }],
      ['Browser.setDownloadBehavior', { behavior: 'allow', downloadPath: '/tmp' }],
      ['Browser.close', {}],
      ['Page.setDownloadBehavior', { behavior: 'allow' }, 'S1'],
      ['DOM.setFileInputFiles', { files: ['/etc/passwd'] }, 'S1'],
      ['Network.loadNetworkResource', { url: 'file:///etc/passwd' }, 'S1'],
      ['Tethering.bind', { port: 22 }],
      ['Extensions.loadUnpacked', { path: '/tmp/x' }],
      ['Tracing.start', {}],
      ['Storage.getCookies', { browserContextId: 'CTX-OTHER' }],
      ['Target.createTarget', { url: 'about:blank', browserContextId: 'CTX-OTHER' }],
      ['Target.createTarget', { url: 'file:///etc/passwd' }],
      ['Target.createTarget', { url: 'chrome://settings' }],
      ['Page.navigate', { url: 'file:///etc/passwd' }, 'S1'],
      ['Page.navigate', { url: 'chrome://version' }, 'S1'],
      ['Page.navigate', { url: 'about:settings' }, 'S1'],
      ['Page.navigate', { url: 'view-source:http://a.test/' }, 'S1'],
      ['Fetch.continueRequest', { requestId: 'r', url: 'file:///etc/passwd' }, 'S1'],
      [
        'Input.dispatchDragEvent',
        { type: 'drop', x: 1, y: 1, data: { items: [], files: ['/etc/passwd'] } },
        'S1',
      ],
      ['Runtime.evaluate', { expression: '1' }],
      ['Runtime.evaluate', { expression: '1' }, 'S-NOT-OURS'],
      ['Target.sendMessageToTarget', { message: '{}', sessionId: 'S1' }],
      ['Target.attachToTarget', { targetId: 'T', flatten: false }],
      ['Target.detachFromTarget', { sessionId: 'S-NOT-OURS' }],
    ];
    for (const [method, params, sessionId] of refused)
      expect(judgeCommand(cmd(method, params, sessionId), s).kind, method).toBe('refuse');
  });

  it('pins new pages and cookie calls to the session’s context, and asks for checks it cannot do', () => {
    const s = newFilterState(CTX);
    expect(judgeCommand(cmd('Target.createTarget', { url: 'about:blank' }), s)).toEqual({
      kind: 'forward',
      params: { url: 'about:blank', browserContextId: CTX },
    });
    expect(judgeCommand(cmd('Target.createTarget', { url: 'http://a.test/' }), s)).toMatchObject({
      urls: ['http://a.test/'],
    });
    expect(judgeCommand(cmd('Storage.getCookies'), s)).toEqual({
      kind: 'forward',
      params: { browserContextId: CTX },
    });
    expect(judgeCommand(cmd('Target.attachToTarget', { targetId: 'T9', flatten: true }), s)).toEqual({
      kind: 'forward',
      targetIds: ['T9'],
    });
    expect(judgeCommand(cmd('Target.getBrowserContexts'), s)).toEqual({
      kind: 'answer',
      result: { browserContextIds: [CTX] },
    });
    // Declining downloads is what Playwright does on connect; it stays allowed.
    expect(judgeCommand(cmd('Browser.setDownloadBehavior', { behavior: 'deny' }), s)).toEqual({
      kind: 'forward',
      params: { behavior: 'deny', browserContextId: CTX },
    });
  });

  it('lets ordinary page work through on the session’s own sessions', () => {
    const s = newFilterState(CTX);
    s.sessions.add('S1');
    for (const [method, params] of [
      ['Runtime.evaluate', { expression: 'document.title' }],
      ['Page.enable', {}],
      ['Page.navigate', { url: 'about:blank' }],
      ['Input.dispatchMouseEvent', { type: 'mousePressed', x: 1, y: 1 }],
      ['Target.setAutoAttach', { autoAttach: true, waitForDebuggerOnStart: true, flatten: true }],
    ] as const)
      expect(judgeCommand(cmd(method, params, 'S1'), s).kind, method).toBe('forward');
    expect(judgeCommand(cmd('Page.navigate', { url: 'https://a.test/x' }, 'S1'), s)).toEqual({
      kind: 'forward',
      params: { url: 'https://a.test/x' },
      urls: ['https://a.test/x'],
    });
  });

  it('reads URLs as the browser will: case, leading blanks and backslashes reach the guard parsed', () => {
    const s = newFilterState(CTX);
    s.sessions.add('S1');
    for (const url of ['HTTP://10.0.0.1/', '  http://10.0.0.1/', '\thttp://10.0.0.1/', 'http:\\\\10.0.0.1\\'])
      for (const verdict of [
        judgeCommand(cmd('Page.navigate', { url }, 'S1'), s),
        judgeCommand(cmd('Target.createTarget', { url }), s),
        judgeCommand(cmd('Fetch.continueRequest', { requestId: '1', url }, 'S1'), s),
      ]) {
        // The browser goes where the guard looked: the parsed URL replaces what the client sent.
        expect(verdict, url).toMatchObject({ kind: 'forward', urls: ['http://10.0.0.1/'] });
        expect((verdict as { params?: Record<string, unknown> }).params?.url, url).toBe('http://10.0.0.1/');
      }
  });

  it('knows which URLs a CDP client may open at all', () => {
    expect(navigableScheme('https://a.test/')).toBe(true);
    expect(navigableScheme('about:blank')).toBe(true);
    expect(navigableScheme('data:text/html,hi')).toBe(true);
    for (const u of ['file:///etc/passwd', 'chrome://version', 'about:settings', 'javascript:1', 'nonsense'])
      expect(navigableScheme(u), u).toBe(false);
  });
});

describe('CDP filter: events and results', () => {
  const attached = (sessionId: string, ctx: string | undefined, parent?: string) => ({
    method: 'Target.attachedToTarget',
    params: { sessionId, targetInfo: { targetId: `T-${sessionId}`, type: 'page', browserContextId: ctx } },
    ...(parent ? { sessionId: parent } : {}),
  });

  it('passes its own context’s targets and detaches from everyone else’s', () => {
    const s = newFilterState(CTX);
    expect(judgeEvent(attached('S1', CTX), s).kind).toBe('pass');
    expect(s.sessions.has('S1')).toBe(true);
    expect(s.targets.has('T-S1')).toBe(true);
    expect(judgeEvent(attached('S2', 'CTX-OTHER'), s)).toEqual({
      kind: 'detach',
      sessionId: 'S2',
      release: false,
    });
    // A foreign target held by a client's waitForDebuggerOnStart is let run before it is left.
    const waiting = attached('S4', 'CTX-OTHER');
    expect(judgeEvent({ ...waiting, params: { ...waiting.params, waitingForDebugger: true } }, s)).toEqual({
      kind: 'detach',
      sessionId: 'S4',
      release: true,
    });
    expect(s.sessions.has('S2')).toBe(false);
    // An iframe of our page, reported without a context id, is ours.
    expect(judgeEvent(attached('S3', undefined, 'S1'), s).kind).toBe('pass');
    // Events on sessions that are not ours never pass.
    expect(judgeEvent({ method: 'Page.loadEventFired', params: {}, sessionId: 'S2' }, s).kind).toBe('drop');
    expect(judgeEvent({ method: 'Page.loadEventFired', params: {}, sessionId: 'S1' }, s).kind).toBe('pass');
  });

  it('shows target discovery only for its context', () => {
    const s = newFilterState(CTX);
    const created = (id: string, ctx: string) => ({
      method: 'Target.targetCreated',
      params: { targetInfo: { targetId: id, browserContextId: ctx } },
    });
    expect(judgeEvent(created('T1', CTX), s).kind).toBe('pass');
    expect(judgeEvent(created('T2', 'CTX-OTHER'), s).kind).toBe('drop');
    expect(judgeEvent({ method: 'Target.targetDestroyed', params: { targetId: 'T2' } }, s).kind).toBe('drop');
    expect(judgeEvent({ method: 'Target.targetDestroyed', params: { targetId: 'T1' } }, s).kind).toBe('pass');
    expect(s.targets.has('T1')).toBe(false);
    expect(judgeEvent({ method: 'Browser.downloadWillBegin', params: {} }, s).kind).toBe('drop');
  });

  it('filters getTargets replies and learns from createTarget and attachToTarget', () => {
    const s = newFilterState(CTX);
    const r = filterResult(
      'Target.getTargets',
      {
        targetInfos: [
          { targetId: 'A', browserContextId: CTX },
          { targetId: 'B', browserContextId: 'CTX-OTHER' },
          { targetId: 'BROWSER', type: 'browser' },
        ],
      },
      s,
    );
    expect(r.targetInfos).toEqual([{ targetId: 'A', browserContextId: CTX }]);
    filterResult('Target.createTarget', { targetId: 'N' }, s);
    filterResult('Target.attachToTarget', { sessionId: 'SN' }, s);
    expect([...s.targets].sort()).toEqual(['A', 'N']);
    expect(s.sessions.has('SN')).toBe(true);
  });
});

describe('session registry', () => {
  const resources = (released: string[], name: string) => ({
    contextId: name,
    release: async () => {
      released.push(name);
    },
  });

  it('keeps tenants apart, checks tokens, and limits open sessions per tenant', async () => {
    const released: string[] = [];
    const reg = new SessionRegistry({ maxPerTenant: 2 });
    const s1 = await reg.open('t1', 'auto', async () => resources(released, 'c1'));
    await reg.open('t1', undefined, async () => resources(released, 'c2'));
    await expect(reg.open('t1', undefined, async () => resources(released, 'c3'))).rejects.toThrow(
      SessionLimitError,
    );
    const other = await reg.open('t2', undefined, async () => resources(released, 'c4'));
    expect(reg.get(s1.id, 't1')).toBe(s1);
    expect(reg.get(s1.id, 't2')).toBeUndefined();
    expect(reg.byToken(s1.id, s1.token)).toBe(s1);
    expect(reg.byToken(s1.id, other.token)).toBeUndefined();
    expect(reg.byToken(s1.id, '')).toBeUndefined();
    expect(s1.token.length).toBeGreaterThanOrEqual(43);
    await reg.end(s1, 'done');
    expect(released).toEqual(['c1']);
    expect(s1.status).toBe('COMPLETED');
    await reg.open('t1', undefined, async () => resources(released, 'c5'));
    await reg.closeAll();
    expect(released.sort()).toEqual(['c1', 'c2', 'c4', 'c5']);
  });

  it('counts a start still in progress against the limit', async () => {
    const reg = new SessionRegistry({ maxPerTenant: 1 });
    let finish!: () => void;
    const slow = reg.open('t', undefined, () => new Promise((r) => (finish = () => r(resources([], 'a')))));
    await expect(reg.open('t', undefined, async () => resources([], 'b'))).rejects.toThrow(/1 open/);
    finish();
    await slow;
    await reg.closeAll();
  });

  it('ends sessions idle past the timeout, never one with a call in flight', async () => {
    let now = 1_000;
    const released: string[] = [];
    const ended: string[] = [];
    const reg = new SessionRegistry({
      idleMs: 60_000,
      now: () => now,
      onEnd: (s, reason) => ended.push(`${s.resources.contextId}: ${reason}`),
    });
    const idle = await reg.open('t', undefined, async () => resources(released, 'idle'));
    const busy = await reg.open('t', undefined, async () => resources(released, 'busy'));
    const socket = {
      closed: '',
      close(reason: string) {
        this.closed = reason;
      },
    };
    idle.sockets.add(socket);
    let release!: () => void;
    const running = reg.using(busy, () => new Promise<void>((r) => (release = r)));
    now += 30_000;
    expect(await reg.sweep()).toBe(0);
    now += 31_000;
    expect(await reg.sweep()).toBe(1);
    expect(released).toEqual(['idle']);
    expect(idle.status).toBe('TIMED_OUT');
    expect(socket.closed).toMatch(/idle/);
    expect(ended[0]).toMatch(/^idle: idle for more than 60000 ms/);
    release();
    await running;
    now += 61_000;
    expect(await reg.sweep()).toBe(1);
    expect(reg.size()).toBe(0);
  });
});
