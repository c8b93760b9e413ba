/**
 * One CDP connection over a web-standard WebSocket, with flat sessions (`sessionId` on every
 * message): the browser target and every page / out-of-process iframe attached to it share the one
 * socket. No Node API: it runs on workerd and Node 22 as is; Node 20 callers pass the `ws` class.
 */

export type WebSocketClass = new (url: string) => WebSocket;

type Params = Record<string, unknown>;
type Handler = (params: Params, sessionId: string | undefined) => void;

interface Pending {
  resolve: (value: Params) => void;
  reject: (err: Error) => void;
  method: string;
}

export class CdpError extends Error {
  override name = 'CdpError';
}

export class CdpConnection {
  #next = 1;
  #pending = new Map<number, Pending>();
  #handlers = new Map<string, Set<Handler>>();
  #closed = false;
  #closeReason = 'the browser connection closed';

  private constructor(private readonly socket: WebSocket) {
    socket.addEventListener('message', (ev: MessageEvent) => this.#receive(ev.data));
    socket.addEventListener('close', () => this.#shut('the browser connection closed'));
    socket.addEventListener('error', () => this.#shut('the browser connection failed'));
  }

  /** Opens the socket; rejects with a readable reason when it does not open in time. */
  static open(url: string, WS: WebSocketClass, timeoutMs = 10_000): Promise<CdpConnection> {
    return new Promise((resolve, reject) => {
      let socket: WebSocket;
      try {
        socket = new WS(url);
      } catch (err) {
        reject(new CdpError(`cannot open ${url}: ${(err as Error).message}`));
        return;
      }
      const timer = setTimeout(() => {
        reject(new CdpError(`no answer from ${url} within ${timeoutMs} ms`));
        try {
          socket.close();
        } catch {
          // Never opened.
        }
      }, timeoutMs);
      socket.addEventListener('open', () => {
        clearTimeout(timer);
        resolve(new CdpConnection(socket));
      });
      socket.addEventListener('error', () => {
        clearTimeout(timer);
        reject(new CdpError(`cannot connect to ${url}`));
      });
    });
  }

  get closed(): boolean {
    return this.#closed;
  }

  send<T = Params>(method: string, params: Params = {}, sessionId?: string): Promise<T> {
    if (this.#closed) return Promise.reject(new CdpError(`${method}: ${this.#closeReason}`));
    const id = this.#next++;
    const message = JSON.stringify(sessionId ? { id, method, params, sessionId } : { id, method, params });
    return new Promise<T>((resolve, reject) => {
      this.#pending.set(id, { resolve: resolve as (v: Params) => void, reject, method });
      try {
        this.socket.send(message);
      } catch (err) {
        this.#pending.delete(id);
        reject(new CdpError(`${method}: ${(err as Error).message}`));
      }
    });
  }

  /** Subscribes to an event of every session; returns the unsubscribe. */
  on(method: string, handler: Handler): () => void {
    let set = this.#handlers.get(method);
    if (!set) {
      set = new Set();
      this.#handlers.set(method, set);
    }
    set.add(handler);
    return () => set.delete(handler);
  }

  close(): void {
    this.#shut('the browser connection was closed');
    try {
      this.socket.close();
    } catch {
      // Already closing.
    }
  }

  #receive(data: unknown): void {
    const text = typeof data === 'string' ? data : new TextDecoder().decode(data as ArrayBuffer);
    const msg = JSON.parse(text) as {
      id?: number;
      method?: string;
      params?: Params;
      result?: Params;
      error?: { message: string; data?: string };
      sessionId?: string;
    };
    if (msg.id !== undefined) {
      const p = this.#pending.get(msg.id);
      if (!p) return;
      this.#pending.delete(msg.id);
      if (msg.error)
        p.reject(
          new CdpError(`${p.method}: ${msg.error.message}${msg.error.data ? ` (${msg.error.data})` : ''}`),
        );
      else p.resolve(msg.result ?? {});
      return;
    }
    if (!msg.method) return;
    const set = this.#handlers.get(msg.method);
    if (!set) return;
    for (const h of [...set]) {
      try {
        h(msg.params ?? {}, msg.sessionId);
      } catch {
        // One listener's bug must not stop the others or the socket.
      }
    }
  }

  #shut(reason: string): void {
    if (this.#closed) return;
    this.#closed = true;
    this.#closeReason = reason;
    for (const p of this.#pending.values()) p.reject(new CdpError(`${p.method}: ${reason}`));
    this.#pending.clear();
    for (const h of this.#handlers.get('__closed') ?? []) h({ reason }, undefined);
  }
}

/** One flat session (a page or an iframe target) on a connection. */
export class CdpSession {
  constructor(
    readonly connection: CdpConnection,
    readonly id: string,
  ) {}

  send<T = Params>(method: string, params: Params = {}): Promise<T> {
    return this.connection.send<T>(method, params, this.id);
  }

  /** Events of this session only. */
  on(method: string, handler: (params: Params) => void): () => void {
    return this.connection.on(method, (params, sessionId) => {
      if (sessionId === this.id) handler(params);
    });
  }
}
