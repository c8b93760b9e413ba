/**
 * What a computer-use model sees: the viewport captured at the size its provider reasons in (the
 * browser scales it while capturing, so no image library is on the hot path), secret-holding fields
 * blacked out, and a marker where the last click landed so the model can check its aim.
 */
import type { CDPSession, Page } from 'playwright-core';
import { fitImage, type ScreenFrame } from '../../actions/coordinates.ts';
import type { ComputerUseProvider } from '../../llm/computer-use/types.ts';

/** Largest long side and area each provider takes without rescaling on its side. */
const PROVIDER_LIMITS: Record<ComputerUseProvider, { longSide: number; pixels: number }> = {
  anthropic: { longSide: 1568, pixels: 1_150_000 },
  openai: { longSide: 1600, pixels: 1_600_000 },
  google: { longSide: 1600, pixels: 1_600_000 },
};

export interface Capture {
  data: string;
  mediaType: 'image/png' | 'image/jpeg';
  frame: ScreenFrame;
}

const sessions = new WeakMap<Page, CDPSession>();

async function cdpOf(page: Page): Promise<CDPSession> {
  const known = sessions.get(page);
  if (known) return known;
  const session = await page.context().newCDPSession(page);
  sessions.set(page, session);
  return session;
}

/** Hides every field whose value holds a secret (and puts it back after the picture). */
function maskSecrets(arg: { values: string[]; on: boolean }) {
  const attr = 'data-bfn-masked';
  if (!arg.on) {
    for (const el of document.querySelectorAll(`[${attr}]`)) {
      (el as HTMLElement).style.cssText = el.getAttribute(attr) ?? '';
      el.removeAttribute(attr);
    }
    return 0;
  }
  let n = 0;
  for (const el of document.querySelectorAll('input, textarea')) {
    const v = (el as HTMLInputElement).value;
    if (!v || !arg.values.some((s) => v.includes(s))) continue;
    el.setAttribute(attr, (el as HTMLElement).style.cssText);
    (el as HTMLElement).style.cssText +=
      ';color:transparent!important;background:#000!important;text-shadow:none!important';
    n++;
  }
  return n;
}

/** A ring at the last click, drawn above everything and ignoring the pointer. */
function drawMarker(arg: { x: number; y: number } | null) {
  const id = '__bfn_click_marker';
  document.getElementById(id)?.remove();
  if (!arg) return;
  const m = document.createElement('div');
  m.id = id;
  m.style.cssText = `position:fixed;left:${arg.x - 9}px;top:${arg.y - 9}px;width:14px;height:14px;border:2px solid #f0f;border-radius:50%;z-index:2147483647;pointer-events:none;box-shadow:0 0 0 2px #fff`;
  document.documentElement.appendChild(m);
}

/**
 * Captures the viewport for `provider`. `marker` (CSS pixels) shows where the last click landed;
 * `secrets` are values no picture may show.
 */
export async function captureScreen(
  page: Page,
  provider: ComputerUseProvider,
  opts: { marker?: { x: number; y: number }; secrets?: Record<string, string>; format?: 'png' | 'jpeg' } = {},
): Promise<Capture> {
  const viewport =
    page.viewportSize() ?? (await page.evaluate(() => ({ width: innerWidth, height: innerHeight })));
  const dpr = await page.evaluate(() => devicePixelRatio).catch(() => 1);
  const limits = PROVIDER_LIMITS[provider];
  const size = fitImage(viewport.width, viewport.height, limits.longSide, limits.pixels);
  const secretValues = Object.values(opts.secrets ?? {}).filter((v) => v.length > 0);
  const masked = secretValues.length > 0;
  const decorate = opts.marker !== undefined;
  if (masked) await page.evaluate(maskSecrets, { values: secretValues, on: true }).catch(() => 0);
  if (decorate) await page.evaluate(drawMarker, opts.marker ?? null).catch(() => undefined);
  try {
    const cdp = await cdpOf(page);
    const format = opts.format ?? 'png';
    const { data } = await cdp.send('Page.captureScreenshot', {
      format,
      ...(format === 'jpeg' ? { quality: 80 } : {}),
      clip: {
        x: 0,
        y: 0,
        width: viewport.width,
        height: viewport.height,
        scale: size.width / viewport.width,
      },
    });
    return {
      data,
      mediaType: format === 'jpeg' ? 'image/jpeg' : 'image/png',
      frame: {
        imageWidth: size.width,
        imageHeight: size.height,
        viewportWidth: viewport.width,
        viewportHeight: viewport.height,
        dpr,
      },
    };
  } finally {
    if (decorate) await page.evaluate(drawMarker, null).catch(() => undefined);
    if (masked) await page.evaluate(maskSecrets, { values: [], on: false }).catch(() => 0);
  }
}
