import type { IncomingMessage } from 'node:http';
import type { Duplex } from 'node:stream';
import type { Hono } from 'hono';
import { forgetRead } from '../../perception/held-read.ts';
import { type KeyRing, tenantForKey } from '../auth.ts';
import type { OpDeps } from '../run-op.ts';
import type { DebuggableBrowser } from './browser.ts';
import { createCdpUpgradeHandler } from './cdp-proxy.ts';
import type { SessionContext } from './context.ts';
import { stagehandRoutes } from './routes.ts';
import { SessionRegistry } from './sessions.ts';

/** Where the protocol lives: `STAGEHAND_API_URL` and `BROWSERBASE_BASE_URL` both point here. */
export const STAGEHAND_PREFIX = '/stagehand';

export interface StagehandDeps extends OpDeps {
  keys: KeyRing;
  /** The embedded browser with a CDP port, shared by all sessions (a context each). */
  debuggableBrowser: () => Promise<DebuggableBrowser>;
  /** Idle time before a session is ended (default 5 min). */
  idleMs?: number;
  /** Open sessions per tenant (default 5). */
  maxSessionsPerTenant?: number;
  requestTimeoutMs?: number;
  /** How long before its deadline `agent().execute()` stops and answers with its steps (default 60 s). */
  agentFinishMs?: number;
  maxBodyBytes?: number;
  publicUrl?: string;
}

export interface StagehandService {
  prefix: string;
  /** Mount with `app.route(prefix, service.app)`. */
  app: Hono<{ Variables: { tenant: string } }>;
  registry: SessionRegistry<SessionContext>;
  /**
   * For the Node server's `upgrade` event: takes the CDP proxy's WebSocket upgrades and answers
   * them (404 for an unknown session or token); returns false for any other path.
   */
  handleUpgrade(req: IncomingMessage, socket: Duplex, head: Buffer): boolean;
  close(): Promise<void>;
}

/** Stagehand v3 API mode on browserfn: HTTP routes, sessions and the CDP proxy, sharing one registry. */
export function createStagehandService(deps: StagehandDeps): StagehandService {
  const registry = new SessionRegistry<SessionContext>({
    ...(deps.idleMs !== undefined ? { idleMs: deps.idleMs } : {}),
    ...(deps.maxSessionsPerTenant !== undefined ? { maxPerTenant: deps.maxSessionsPerTenant } : {}),
    onEnd: (s, reason) =>
      deps.log?.({ level: 'info', msg: 'stagehand session ended', session: s.id, reason }),
  });
  const prefix = STAGEHAND_PREFIX;
  const app = stagehandRoutes({ ...deps, registry, prefix });
  const cdpPath = `${prefix}/cdp/`;
  const upgrade = createCdpUpgradeHandler({
    resolve(req) {
      const url = new URL(req.url ?? '/', 'http://upgrade.local');
      const id = url.pathname.slice(cdpPath.length);
      const s = registry.byToken(id, url.searchParams.get('token') ?? '');
      if (!s) return undefined;
      // The token is the capability; a key, if one is sent too, must be the owner's.
      const key = req.headers['x-bb-api-key'];
      if (typeof key === 'string' && tenantForKey(deps.keys, key) !== s.tenant) return undefined;
      return {
        contextId: s.resources.contextId,
        policy: deps.policy,
        wsEndpoint: s.resources.wsEndpoint,
        onActivity: () => registry.touch(s),
        onPageChange: () => {
          for (const page of s.resources.context.pages()) forgetRead(page);
        },
        track: (conn) => {
          s.sockets.add(conn);
          return () => s.sockets.delete(conn);
        },
      };
    },
  });
  return {
    prefix,
    app,
    registry,
    handleUpgrade(req, socket, head) {
      if (!(req.url ?? '').startsWith(cdpPath)) return false;
      upgrade(req, socket, head);
      return true;
    },
    close: () => registry.closeAll(),
  };
}
