import type { IncomingMessage } from 'node:http';
import type { Duplex } from 'node:stream';
import WebSocket, { WebSocketServer } from 'ws';
import { checkUrl } from '../../browser/guard.ts';
import type { GuardPolicy } from '../../browser/guard-policy.ts';
import {
  type CdpCommand,
  type CdpMessage,
  type FilterState,
  filterResult,
  judgeCommand,
  judgeEvent,
  mayChangePage,
  newFilterState,
  REFUSED_CODE,
} from './cdp-filter.ts';

export interface ProxyTarget {
  /** The browser's own CDP WebSocket (loopback). */
  wsEndpoint: string;
  contextId: string;
  policy: GuardPolicy;
  /** Called on every client command: CDP use keeps a session from going idle. */
  onActivity(): void;
  /** Called before a command that may change what a page shows is forwarded. */
  onPageChange?(): void;
}

interface Pending {
  clientId: number;
  method: string;
  sessionId?: string;
}

/**
 * One client connection, bridged to its own connection to the browser. Client commands are
 * handled one at a time, in order (CDP clients rely on it), each judged by cdp-filter first;
 * browser messages are filtered the other way. Ids are the proxy's own, so the proxy can ask the
 * browser questions (whose target is this?) on the same socket without the client seeing them.
 */
class ProxiedConnection {
  private readonly state: FilterState;
  private readonly upstream: WebSocket;
  private readonly opened: Promise<void>;
  private readonly pending = new Map<number, Pending>();
  private readonly internal = new Map<number, (m: CdpMessage) => void>();
  private nextId = 1;
  private queue: Promise<void> = Promise.resolve();

  constructor(
    private readonly client: WebSocket,
    private readonly target: ProxyTarget,
  ) {
    this.state = newFilterState(target.contextId);
    this.upstream = new WebSocket(target.wsEndpoint, {
      perMessageDeflate: false,
      maxPayload: 256 * 1024 * 1024,
    });
    this.opened = new Promise((resolve, reject) => {
      this.upstream.once('open', () => resolve());
      this.upstream.once('error', reject);
    });
    this.opened.catch(() => this.close('browser unavailable'));
    this.upstream.on('message', (data) => this.fromBrowser(data.toString()));
    this.upstream.on('close', () => this.close('browser connection closed'));
    this.upstream.on('error', () => this.close('browser connection failed'));
    client.on('message', (data) => {
      target.onActivity();
      const text = data.toString();
      this.queue = this.queue.then(() => this.fromClient(text)).catch(() => undefined);
    });
    client.on('close', () => this.close('client left'));
    client.on('error', () => this.close('client error'));
  }

  onClosed: (() => void) | undefined;
  private closed = false;

  close(reason: string) {
    if (!this.closed) {
      this.closed = true;
      this.onClosed?.();
    }
    if (this.client.readyState === WebSocket.OPEN) this.client.close(1000, reason.slice(0, 120));
    if (this.upstream.readyState === WebSocket.OPEN || this.upstream.readyState === WebSocket.CONNECTING)
      this.upstream.terminate();
  }

  private toClient(msg: unknown) {
    if (this.client.readyState === WebSocket.OPEN) this.client.send(JSON.stringify(msg));
  }

  private toBrowser(msg: { method: string; params?: Record<string, unknown>; sessionId?: string }): number {
    const id = this.nextId++;
    if (this.upstream.readyState === WebSocket.OPEN) this.upstream.send(JSON.stringify({ id, ...msg }));
    return id;
  }

  private ask(method: string, params: Record<string, unknown>): Promise<CdpMessage> {
    const id = this.toBrowser({ method, params });
    return new Promise((resolve) => this.internal.set(id, resolve));
  }

  private async owned(targetId: string): Promise<boolean> {
    if (this.state.targets.has(targetId)) return true;
    if (!targetId) return false;
    const reply = await this.ask('Target.getTargetInfo', { targetId });
    const info = reply.result?.targetInfo as { browserContextId?: string } | undefined;
    if (info?.browserContextId !== this.state.contextId) return false;
    this.state.targets.add(targetId);
    return true;
  }

  private async fromClient(text: string) {
    let cmd: CdpCommand;
    try {
      cmd = JSON.parse(text) as CdpCommand;
    } catch {
      this.close('invalid JSON from client');
      return;
    }
    const badParams =
      cmd.params !== undefined &&
      (typeof cmd.params !== 'object' || cmd.params === null || Array.isArray(cmd.params));
    if (
      typeof cmd.id !== 'number' ||
      typeof cmd.method !== 'string' ||
      badParams ||
      (cmd.sessionId !== undefined && typeof cmd.sessionId !== 'string')
    ) {
      this.toClient({
        id: cmd.id,
        error: { code: -32600, message: 'a command needs a numeric id, a method, and object params' },
      });
      return;
    }
    await this.opened;
    const reply = (body: { result: unknown } | { error: { code: number; message: string } }) =>
      this.toClient({ id: cmd.id, ...(cmd.sessionId ? { sessionId: cmd.sessionId } : {}), ...body });
    const refuse = (message: string) =>
      reply({ error: { code: REFUSED_CODE, message: `browserfn: ${message}` } });
    const verdict = judgeCommand(cmd, this.state);
    if (verdict.kind === 'refuse') return refuse(verdict.message);
    if (verdict.kind === 'answer') return reply({ result: verdict.result });
    for (const id of verdict.targetIds ?? [])
      if (!(await this.owned(id)))
        return refuse(`${cmd.method}: target ${id} is not in this session's context`);
    for (const url of verdict.urls ?? []) {
      const v = await checkUrl(url, this.target.policy);
      if (!v.ok) return refuse(`${cmd.method}: ${v.message}`);
    }
    if (mayChangePage(cmd.method)) this.target.onPageChange?.();
    const id = this.toBrowser({
      method: cmd.method,
      params: verdict.params ?? cmd.params ?? {},
      ...(cmd.sessionId ? { sessionId: cmd.sessionId } : {}),
    });
    this.pending.set(id, {
      clientId: cmd.id,
      method: cmd.method,
      ...(cmd.sessionId ? { sessionId: cmd.sessionId } : {}),
    });
  }

  private fromBrowser(text: string) {
    let msg: CdpMessage;
    try {
      msg = JSON.parse(text) as CdpMessage;
    } catch {
      return;
    }
    if (typeof msg.id === 'number') {
      const own = this.internal.get(msg.id);
      if (own) {
        this.internal.delete(msg.id);
        own(msg);
        return;
      }
      const p = this.pending.get(msg.id);
      if (!p) return;
      this.pending.delete(msg.id);
      const base = { id: p.clientId, ...(p.sessionId ? { sessionId: p.sessionId } : {}) };
      if (msg.error) this.toClient({ ...base, error: msg.error });
      else this.toClient({ ...base, result: filterResult(p.method, msg.result ?? {}, this.state) });
      return;
    }
    const verdict = judgeEvent(msg, this.state);
    if (verdict.kind === 'pass') {
      if (this.client.readyState === WebSocket.OPEN) this.client.send(text);
    } else if (verdict.kind === 'detach') {
      // Another context's target, attached by the browser-wide auto-attach: let go of it at once,
      // releasing first the pause a client's waitForDebuggerOnStart put on it (flat session: the
      // command goes to the attached session itself).
      if (verdict.release)
        this.toBrowser({ method: 'Runtime.runIfWaitingForDebugger', sessionId: verdict.sessionId });
      this.toBrowser({
        method: 'Target.detachFromTarget',
        params: { sessionId: verdict.sessionId },
        ...(verdict.parentSessionId ? { sessionId: verdict.parentSessionId } : {}),
      });
    }
  }
}

export interface UpgradeRoute {
  /** Resolves the path and query of an upgrade request to a session, or undefined (→ 404). */
  resolve(
    req: IncomingMessage,
  ): (ProxyTarget & { track(conn: { close(reason: string): void }): () => void }) | undefined;
}

/** Handles WebSocket upgrades for the CDP proxy; answers plain HTTP errors for refused ones. */
export function createCdpUpgradeHandler(route: UpgradeRoute) {
  const wss = new WebSocketServer({ noServer: true, perMessageDeflate: false, maxPayload: 64 * 1024 * 1024 });
  return (req: IncomingMessage, socket: Duplex, head: Buffer) => {
    const target = route.resolve(req);
    if (!target) {
      socket.end(
        'HTTP/1.1 404 Not Found\r\ncontent-type: text/plain\r\nconnection: close\r\n\r\nno such session\n',
      );
      return;
    }
    wss.handleUpgrade(req, socket, head, (client) => {
      const conn = new ProxiedConnection(client, target);
      conn.onClosed = target.track(conn);
    });
  };
}
