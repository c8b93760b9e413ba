/**
 * What a CDP client of one Stagehand session may say to the shared browser, and what it may hear.
 * Pure: the proxy (cdp-proxy.ts) owns the sockets and asks these functions what to do with each
 * message. A session is one browser context; everything here keeps the client inside it.
 */

export interface CdpCommand {
  id: number;
  method: string;
  params?: Record<string, unknown>;
  sessionId?: string;
}

export interface CdpMessage {
  id?: number;
  method?: string;
  params?: Record<string, unknown>;
  sessionId?: string;
  result?: Record<string, unknown>;
  error?: { code: number; message: string };
}

/** What one proxied connection knows: its context, the flat sessions and targets it may touch. */
export interface FilterState {
  contextId: string;
  sessions: Set<string>;
  targets: Set<string>;
}

export const newFilterState = (contextId: string): FilterState => ({
  contextId,
  sessions: new Set(),
  targets: new Set(),
});

/** Why the proxy answers a command itself instead of the browser (CDP "server error" code). */
export const REFUSED_CODE = -32000;

export type CommandVerdict =
  | { kind: 'refuse'; message: string }
  | { kind: 'answer'; result: Record<string, unknown> }
  | {
      kind: 'forward';
      params?: Record<string, unknown>;
      /** Targets that must be shown to belong to the session's context before forwarding. */
      targetIds?: string[];
      /** URLs that must pass the network guard before forwarding. */
      urls?: string[];
    };

const refuse = (message: string): CommandVerdict => ({ kind: 'refuse', message });

/** Anything that reaches outside the context, the browser process or the server's disk. */
const NEVER: Record<string, string> = {
  'Target.createBrowserContext': 'a session is one browser context; it cannot make others',
  'Target.disposeBrowserContext': 'a session cannot dispose of browser contexts',
  'Target.attachToBrowserTarget': 'the browser target reaches every context',
  'Target.exposeDevToolsProtocol': 'exposing the protocol to pages is not allowed',
  'Target.setRemoteLocations': 'remote target discovery is not allowed',
  'Target.sendMessageToTarget': 'use flat sessions (flatten: true)',
  'DOM.setFileInputFiles': 'files on the server are not yours to upload',
  'Network.loadNetworkResource': 'loads resources outside the page and its network guard',
  'Security.setIgnoreCertificateErrors': 'certificate checks apply to the whole browser',
  'Page.setDownloadBehavior': 'downloads are off in browserfn sessions',
  'Browser.setDownloadBehavior': 'downloads are off in browserfn sessions',
};
const NEVER_DOMAINS = new Set([
  'Browser',
  'Tethering',
  'Extensions',
  'PWA',
  'SystemInfo',
  'Memory',
  'Tracing',
]);
const BROWSER_OK = new Set(['Browser.getVersion']);

/** Methods that make sense on the browser-level connection (no sessionId). */
const ROOT_OK = new Set([
  'Target.setAutoAttach',
  'Target.setDiscoverTargets',
  'Target.getTargets',
  'Target.getTargetInfo',
  'Target.createTarget',
  'Target.attachToTarget',
  'Target.detachFromTarget',
  'Target.closeTarget',
  'Target.activateTarget',
  'Target.autoAttachRelated',
  'Target.getBrowserContexts',
  'Browser.getVersion',
  'Browser.setDownloadBehavior',
  'Storage.getCookies',
  'Storage.setCookies',
  'Storage.clearCookies',
  'Schema.getDomains',
]);

/**
 * Where a page may be sent by a CDP client, read the way the browser reads it (the WHATWG parser:
 * `HTTP://…`, ` http://…` with leading spaces or tabs and `http:\\host` are all web URLs):
 * `web` with the parsed address the guard must pass, `blank` for about:blank and data: pages, or
 * undefined for anything else.
 */
export function navigationOf(url: string): { kind: 'web'; href: string } | { kind: 'blank' } | undefined {
  let u: URL;
  try {
    u = new URL(url);
  } catch {
    return undefined;
  }
  if (u.protocol === 'http:' || u.protocol === 'https:') return { kind: 'web', href: u.href };
  // about:blank only: other about: pages map to chrome:// pages.
  if (u.protocol === 'about:') return u.href === 'about:blank' ? { kind: 'blank' } : undefined;
  return u.protocol === 'data:' ? { kind: 'blank' } : undefined;
}

export const navigableScheme = (url: string): boolean => navigationOf(url) !== undefined;

/**
 * The verdict for a command that sends a page to `url`: refused unless navigable; a web URL is
 * forwarded in the parsed form the guard checked, so the browser goes where the guard looked.
 */
function navigation(
  method: string,
  key: string,
  url: string,
  params: Record<string, unknown>,
): CommandVerdict {
  const nav = navigationOf(url);
  if (!nav) return refuse(`${method}: ${url} is not a web URL`);
  if (nav.kind === 'blank') return { kind: 'forward', params };
  return { kind: 'forward', params: { ...params, [key]: nav.href }, urls: [nav.href] };
}

const str = (v: unknown): string | undefined => (typeof v === 'string' ? v : undefined);

/** Decides one client command. Async checks (target ownership, the guard) are left to the caller. */
export function judgeCommand(cmd: CdpCommand, state: FilterState): CommandVerdict {
  const params = cmd.params ?? {};
  if (cmd.sessionId !== undefined && !state.sessions.has(cmd.sessionId))
    return refuse(`session ${cmd.sessionId} is not one of this connection's sessions`);
  const domain = cmd.method.split('.')[0] ?? '';
  if (cmd.method === 'Browser.setDownloadBehavior' || cmd.method === 'Page.setDownloadBehavior') {
    // Saying no to downloads is fine (Playwright does it when it connects); granting them is not.
    if (params.behavior !== 'deny') return refuse(`${cmd.method}: ${NEVER[cmd.method]}`);
    return cmd.method === 'Browser.setDownloadBehavior'
      ? { kind: 'forward', params: { ...params, browserContextId: state.contextId } }
      : { kind: 'forward' };
  }
  if (NEVER[cmd.method]) return refuse(`${cmd.method}: ${NEVER[cmd.method]}`);
  if (NEVER_DOMAINS.has(domain) && !BROWSER_OK.has(cmd.method))
    return refuse(`${cmd.method}: the ${domain} domain is not available through browserfn's CDP proxy`);
  if (cmd.sessionId === undefined && !ROOT_OK.has(cmd.method))
    return refuse(`${cmd.method} is not available on the browser connection; attach to a page first`);
  const ctx = str(params.browserContextId);
  if (ctx !== undefined && ctx !== state.contextId)
    return refuse(`${cmd.method}: browser context ${ctx} is not this session's`);

  switch (cmd.method) {
    case 'Target.getBrowserContexts':
      return { kind: 'answer', result: { browserContextIds: [state.contextId] } };
    case 'Target.createTarget':
      return navigation(cmd.method, 'url', str(params.url) ?? 'about:blank', {
        ...params,
        browserContextId: state.contextId,
      });
    case 'Target.setAutoAttach':
    case 'Target.attachToTarget':
    case 'Target.autoAttachRelated':
      if (params.flatten === false || (cmd.method === 'Target.attachToTarget' && params.flatten !== true))
        return refuse(`${cmd.method}: only flat sessions (flatten: true) are served`);
      return cmd.method === 'Target.setAutoAttach'
        ? { kind: 'forward' }
        : { kind: 'forward', targetIds: [str(params.targetId) ?? ''] };
    case 'Target.getTargetInfo':
      // Without a target id it describes the connection's own target (the browser): harmless.
      return params.targetId === undefined
        ? { kind: 'forward' }
        : { kind: 'forward', targetIds: [str(params.targetId) ?? ''] };
    case 'Target.closeTarget':
    case 'Target.activateTarget':
      return { kind: 'forward', targetIds: [str(params.targetId) ?? ''] };
    case 'Target.detachFromTarget': {
      const sid = str(params.sessionId);
      if (sid !== undefined && !state.sessions.has(sid))
        return refuse(`Target.detachFromTarget: session ${sid} is not this connection's`);
      return sid !== undefined
        ? { kind: 'forward' }
        : { kind: 'forward', targetIds: [str(params.targetId) ?? ''] };
    }
    case 'Storage.getCookies':
    case 'Storage.setCookies':
    case 'Storage.clearCookies':
      // On the browser connection these default to the browser's default context: pin them to ours.
      return cmd.sessionId === undefined
        ? { kind: 'forward', params: { ...params, browserContextId: state.contextId } }
        : { kind: 'forward' };
    case 'Page.navigate':
      return navigation(cmd.method, 'url', str(params.url) ?? '', params);
    case 'Fetch.continueRequest':
    case 'Network.continueInterceptedRequest': {
      const url = str(params.url);
      if (url === undefined) return { kind: 'forward' };
      const nav = navigationOf(url);
      if (nav?.kind !== 'web')
        return refuse(`${cmd.method}: requests may only be redirected to http(s) URLs`);
      return { kind: 'forward', params: { ...params, url: nav.href }, urls: [nav.href] };
    }
    case 'Input.dispatchDragEvent': {
      const data = params.data as { files?: unknown[] } | undefined;
      if (data?.files?.length) return refuse('Input.dispatchDragEvent: dropping server files is not allowed');
      return { kind: 'forward' };
    }
    default:
      return { kind: 'forward' };
  }
}

interface TargetInfo {
  targetId?: string;
  browserContextId?: string;
  type?: string;
}

export type UpstreamVerdict =
  | { kind: 'pass'; message: CdpMessage }
  | { kind: 'drop' }
  /**
   * A session the browser attached us to in another context: leave it at once, tell no one. With
   * `release`, the target waits for us (a client's `waitForDebuggerOnStart`): let it run first, or
   * another tenant's new page would stay paused for good, since detaching does not resume it.
   */
  | { kind: 'detach'; sessionId: string; parentSessionId?: string; release: boolean };

const ownTarget = (info: TargetInfo | undefined, state: FilterState) =>
  !!info && info.browserContextId === state.contextId;

/** Filters one event from the browser; updates what the connection may touch. */
export function judgeEvent(msg: CdpMessage, state: FilterState): UpstreamVerdict {
  const params = msg.params ?? {};
  const parent = msg.sessionId;
  const info = params.targetInfo as TargetInfo | undefined;
  const foreignParent = parent !== undefined && !state.sessions.has(parent);
  if (msg.method === 'Target.attachedToTarget') {
    const sid = str(params.sessionId) ?? '';
    // Children of one of our pages (iframes, workers) stay in its context; the browser-level
    // auto-attach reports every context's pages, and only ours may pass. An attach we do not pass
    // on is released and left, whoever its parent is: nobody else will ever resume it for us.
    const mine =
      !foreignParent &&
      (ownTarget(info, state) || (parent !== undefined && info?.browserContextId === undefined));
    if (!mine)
      return {
        kind: 'detach',
        sessionId: sid,
        ...(parent ? { parentSessionId: parent } : {}),
        release: params.waitingForDebugger === true,
      };
  }
  if (foreignParent) return { kind: 'drop' };
  switch (msg.method) {
    case 'Target.attachedToTarget': {
      const sid = str(params.sessionId) ?? '';
      state.sessions.add(sid);
      if (info?.targetId) state.targets.add(info.targetId);
      return { kind: 'pass', message: msg };
    }
    case 'Target.detachedFromTarget': {
      const sid = str(params.sessionId) ?? '';
      if (!state.sessions.delete(sid)) return { kind: 'drop' };
      return { kind: 'pass', message: msg };
    }
    case 'Target.targetCreated':
    case 'Target.targetInfoChanged':
      if (!ownTarget(info, state)) return { kind: 'drop' };
      if (info?.targetId) state.targets.add(info.targetId);
      return { kind: 'pass', message: msg };
    case 'Target.targetDestroyed':
    case 'Target.targetCrashed': {
      const id = str(params.targetId) ?? '';
      if (!state.targets.has(id)) return { kind: 'drop' };
      if (msg.method === 'Target.targetDestroyed') state.targets.delete(id);
      return { kind: 'pass', message: msg };
    }
    case 'Target.receivedMessageFromTarget':
      return { kind: 'drop' };
    default:
      // Browser-level events other than the Target ones above (downloads, …) concern every
      // context: none reach a session's client.
      if (parent === undefined && !msg.method?.startsWith('Target.')) return { kind: 'drop' };
      return { kind: 'pass', message: msg };
  }
}

/** Rewrites a reply to a forwarded command so it shows only the session's context. */
export function filterResult(method: string, result: Record<string, unknown>, state: FilterState) {
  if (method === 'Target.getTargets') {
    const infos = (result.targetInfos as TargetInfo[] | undefined) ?? [];
    const mine = infos.filter((t) => ownTarget(t, state));
    for (const t of mine) if (t.targetId) state.targets.add(t.targetId);
    return { ...result, targetInfos: mine };
  }
  if (method === 'Target.createTarget' && typeof result.targetId === 'string')
    state.targets.add(result.targetId);
  if (method === 'Target.attachToTarget' && typeof result.sessionId === 'string')
    state.sessions.add(result.sessionId);
  return result;
}

/**
 * Commands that only read or set up listening: they cannot change what a page shows. Anything
 * else a client sends (input, script, navigation, emulation) may, so the pages' held reads are
 * dropped before it is forwarded (perception/held-read.ts).
 */
const ONLY_READS =
  /\.(enable|disable|get\w*|describeNode|querySelector|querySelectorAll|resolveNode|requestNode|pushNodesByBackendIdsToFrontend|releaseObject|releaseObjectGroup|captureScreenshot|setLifecycleEventsEnabled|setDiscoverTargets|setAutoAttach|attachToTarget|detachFromTarget|runIfWaitingForDebugger|addScriptToEvaluateOnNewDocument)$/;

export const mayChangePage = (method: string): boolean => !ONLY_READS.test(method);
