/**
 * Opening a tab of a remote browser for the raw-CDP driver: a new tab in a context of its own
 * (where the browser allows one), or the browser's existing first page (`attach: 'existing'`, for
 * providers whose session is one page whose state must carry over between calls).
 */
import { CdpPageDriver } from './cdp-driver.ts';
import { CdpConnection, CdpSession, type WebSocketClass } from './cdp-session.ts';
import { brandDriver, type PageDriver } from './page-driver.ts';

export interface CdpDriverOptions {
  /** The WebSocket class: the global one on workerd / Node 22, the `ws` package's on Node 20. */
  WebSocket?: WebSocketClass;
  viewport?: { width: number; height: number };
  /** Connect / first answer timeout (default 10 s). */
  timeoutMs?: number;
  /**
   * 'new' (default): a new tab, closed by `close()`. 'existing': the browser's first page (a new
   * one only when it has none), left open by `close()`, which then only disconnects.
   */
  attach?: 'new' | 'existing';
}

export interface CdpPage {
  driver: PageDriver;
  /** HTTP status of the page's current document, as the Node session reports it (undefined: not seen). */
  status(): number | undefined;
  close(): Promise<void>;
}

interface TargetInfo {
  targetId: string;
  type: string;
  attached?: boolean;
}

export async function openCdpPage(wsUrl: string, options: CdpDriverOptions = {}): Promise<CdpPage> {
  const WS = options.WebSocket ?? (globalThis as { WebSocket?: WebSocketClass }).WebSocket;
  if (!WS) throw new Error('no WebSocket class: pass one (the ws package on Node 20)');
  const conn = await CdpConnection.open(wsUrl, WS, options.timeoutMs ?? 10_000);
  let contextId: string | undefined;
  let owned = true;
  try {
    let targetId: string | undefined;
    if (options.attach === 'existing') {
      const { targetInfos } = await conn.send<{ targetInfos: TargetInfo[] }>('Target.getTargets');
      // A page no other client drives (ours or anyone's) first.
      const pages = targetInfos.filter((t) => t.type === 'page');
      targetId = (pages.find((t) => !t.attached) ?? pages[0])?.targetId;
      if (targetId) owned = false;
    }
    if (!targetId) {
      if (options.attach !== 'existing') {
        try {
          ({ browserContextId: contextId } = await conn.send<{ browserContextId: string }>(
            'Target.createBrowserContext',
            { disposeOnDetach: true },
          ));
        } catch {
          // Some providers give one context per session: use it.
        }
      }
      ({ targetId } = await conn.send<{ targetId: string }>('Target.createTarget', {
        url: 'about:blank',
        ...(contextId ? { browserContextId: contextId } : {}),
      }));
    }
    const { sessionId } = await conn.send<{ sessionId: string }>('Target.attachToTarget', {
      targetId,
      flatten: true,
    });
    const driver = new CdpPageDriver(conn, new CdpSession(conn, sessionId));
    // An existing page keeps the size its provider gave it unless the caller asks for one.
    const viewport = options.viewport ?? (owned ? { width: 1280, height: 800 } : undefined);
    await driver.init(viewport);
    const target = targetId;
    return {
      driver: brandDriver(driver),
      status: () => driver.documentStatus(),
      close: async () => {
        if (owned) await conn.send('Target.closeTarget', { targetId: target }).catch(() => undefined);
        if (contextId)
          await conn
            .send('Target.disposeBrowserContext', { browserContextId: contextId })
            .catch(() => undefined);
        conn.close();
      },
    };
  } catch (err) {
    conn.close();
    throw err;
  }
}
