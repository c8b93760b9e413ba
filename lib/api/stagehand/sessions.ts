import { randomBytes, randomUUID, timingSafeEqual } from 'node:crypto';

/** One call as `GET …/replay` reports it: the SDK sums `tokenUsage` per method into its metrics. */
export interface ReplayAction {
  method: 'act' | 'observe' | 'extract' | 'navigate' | 'agent';
  /** Instruction and option names only: variable values never land here. */
  parameters: Record<string, unknown>;
  result: Record<string, unknown>;
  timestamp: number;
  url: string;
  tokenUsage: {
    inputTokens: number;
    outputTokens: number;
    reasoningTokens: number;
    cachedInputTokens: number;
    timeMs: number;
  };
}

/** What a session holds on to; the browser side stays behind `release`. */
export interface SessionResources {
  /** CDP `browserContextId` of the session's context. */
  contextId: string;
  release(): Promise<void>;
}

export interface StagehandSession<R extends SessionResources = SessionResources> {
  id: string;
  tenant: string;
  /** Capability for the CDP proxy URL: 32 random bytes. */
  token: string;
  resources: R;
  modelName: string | undefined;
  /** The script's `systemPrompt`: standing instructions for the model in act, observe and extract. */
  systemPrompt?: string;
  createdAt: number;
  lastActive: number;
  /** Calls in flight: a session is never idle while one runs. */
  busy: number;
  replay: ReplayAction[];
  /** Open CDP proxy connections, closed with the session. */
  sockets: Set<{ close(reason: string): void }>;
  status: 'RUNNING' | 'COMPLETED' | 'TIMED_OUT';
  endedAt?: number;
}

export class SessionLimitError extends Error {
  override name = 'SessionLimitError';
}

export interface RegistryOptions {
  /** A session with no call and no CDP command for this long is ended (default 5 min). */
  idleMs?: number;
  /** Open sessions per tenant (default 5). */
  maxPerTenant?: number;
  now?: () => number;
  onEnd?: (s: StagehandSession, reason: string) => void;
}

/**
 * Open sessions by id. Lookups take the tenant: another tenant's session does not exist for you.
 * Slots are reserved before the (slow) context is made, so concurrent starts cannot pass the limit.
 */
export class SessionRegistry<R extends SessionResources = SessionResources> {
  readonly idleMs: number;
  readonly maxPerTenant: number;
  private readonly sessions = new Map<string, StagehandSession<R>>();
  private readonly reserved = new Map<string, number>();
  private readonly now: () => number;
  private timer: NodeJS.Timeout | undefined;

  constructor(private readonly options: RegistryOptions = {}) {
    this.idleMs = options.idleMs ?? 5 * 60_000;
    this.maxPerTenant = options.maxPerTenant ?? 5;
    this.now = options.now ?? Date.now;
  }

  openCount(tenant: string): number {
    let n = this.reserved.get(tenant) ?? 0;
    for (const s of this.sessions.values()) if (s.tenant === tenant) n++;
    return n;
  }

  async open(tenant: string, modelName: string | undefined, create: () => Promise<R>) {
    if (this.openCount(tenant) >= this.maxPerTenant)
      throw new SessionLimitError(
        `this key already has ${this.maxPerTenant} open Stagehand sessions (the limit): end one with ` +
          `stagehand.close(), or wait until one has been idle for ${Math.round(this.idleMs / 1000)} s`,
      );
    this.reserved.set(tenant, (this.reserved.get(tenant) ?? 0) + 1);
    let resources: R;
    try {
      resources = await create();
    } finally {
      const left = (this.reserved.get(tenant) ?? 1) - 1;
      if (left > 0) this.reserved.set(tenant, left);
      else this.reserved.delete(tenant);
    }
    const at = this.now();
    const session: StagehandSession<R> = {
      id: randomUUID(),
      tenant,
      token: randomBytes(32).toString('base64url'),
      resources,
      modelName,
      createdAt: at,
      lastActive: at,
      busy: 0,
      replay: [],
      sockets: new Set(),
      status: 'RUNNING',
    };
    this.sessions.set(session.id, session);
    this.startSweeping();
    return session;
  }

  /** The tenant's session, or undefined (also for another tenant's). */
  get(id: string, tenant: string): StagehandSession<R> | undefined {
    const s = this.sessions.get(id);
    return s && s.tenant === tenant ? s : undefined;
  }

  /** For the CDP upgrade, which carries a token instead of a key. */
  byToken(id: string, token: string): StagehandSession<R> | undefined {
    const s = this.sessions.get(id);
    if (!s) return undefined;
    const a = Buffer.from(s.token);
    const b = Buffer.from(token);
    return a.length === b.length && timingSafeEqual(a, b) ? s : undefined;
  }

  touch(s: StagehandSession<R>): void {
    s.lastActive = this.now();
  }

  /** Runs `fn` with the session marked busy, so the idle sweep leaves it alone meanwhile. */
  async using<T>(s: StagehandSession<R>, fn: () => Promise<T>): Promise<T> {
    s.busy++;
    this.touch(s);
    try {
      return await fn();
    } finally {
      s.busy--;
      this.touch(s);
    }
  }

  async end(s: StagehandSession<R>, reason: string, status: 'COMPLETED' | 'TIMED_OUT' = 'COMPLETED') {
    if (!this.sessions.delete(s.id)) return;
    s.status = status;
    s.endedAt = this.now();
    for (const socket of s.sockets) socket.close(reason);
    s.sockets.clear();
    this.options.onEnd?.(s, reason);
    await s.resources.release().catch(() => undefined);
    if (this.sessions.size === 0) this.stopSweeping();
  }

  /** Ends sessions idle for longer than `idleMs`; returns how many. */
  async sweep(): Promise<number> {
    const limit = this.now() - this.idleMs;
    const idle = [...this.sessions.values()].filter((s) => s.busy === 0 && s.lastActive < limit);
    await Promise.all(idle.map((s) => this.end(s, `idle for more than ${this.idleMs} ms`, 'TIMED_OUT')));
    return idle.length;
  }

  async closeAll(): Promise<void> {
    this.stopSweeping();
    await Promise.all([...this.sessions.values()].map((s) => this.end(s, 'server shutting down')));
  }

  size(): number {
    return this.sessions.size;
  }

  private startSweeping() {
    if (this.timer) return;
    this.timer = setInterval(() => void this.sweep(), Math.max(250, Math.min(this.idleMs / 4, 30_000)));
    this.timer.unref();
  }

  private stopSweeping() {
    clearInterval(this.timer);
    this.timer = undefined;
  }
}
