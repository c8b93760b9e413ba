import { sha256Hex } from '../sha256.ts';
import { type CollectOptions, collect } from './collect.ts';
import { features } from './features.ts';
import { interactivity } from './interactive.ts';
import { lineRules } from './line-rules.ts';
import { names } from './names.ts';
import { records } from './record.ts';
import { resolveLocator } from './resolve.ts';
import { scoping } from './scope.ts';
import { semantics } from './semantics.ts';
import { states } from './states.ts';
import { armWatch } from './watch.ts';
import { wire } from './wire.ts';
import { wireText } from './wire-text.ts';
import { xpaths } from './xpath.ts';

/**
 * Turns an in-page function into an expression string. Transpilers (tsx/esbuild) may wrap nested
 * functions in a `__name(fn, "name")` helper that does not exist in the page, so we define it.
 */
function expression(fn: (arg: never) => unknown, arg: unknown): string {
  return `(() => { const __name = (f) => f; return (${fn.toString()})(${JSON.stringify(arg)}); })()`;
}

/**
 * The in-page factories of collect()'s helpers, in order: each is handed the helpers made before it
 * and adds its own to the one object collect() runs with (see Helpers in collect.ts).
 */
const HELPERS = [
  semantics,
  names,
  states,
  interactivity,
  features,
  xpaths,
  records,
  lineRules,
  scoping,
  wire,
];

/**
 * Asked to, a document whose DOM changed within the last `quietMs` (the mutation clock the context's
 * init script keeps) answers `{"busy":true}` at once instead of being walked: "is it settled?" and
 * "read it" become one round trip on a quiet page, and a busy one costs no wasted walk.
 */
const busyCheck = (quietMs: number | undefined): string =>
  quietMs === undefined
    ? ''
    : `const last = globalThis.__bfnLastMutation; if (last !== undefined && performance.now() - last < ${Number(quietMs)}) return JSON.stringify({ busy: true });`;

/**
 * With `watch` (the name of the binding the server exposed), the read also arms the page's change
 * notice (watch.ts) in the same round trip, and says where its change count stood. A page that
 * took the arming function away gets no notice, and so no held reads.
 */
const arming = (watch: string | undefined): string =>
  watch
    ? `const arm = globalThis.__bfnArm; if (typeof arm === 'function') r.watch = arm(${JSON.stringify(watch)});`
    : '';

/**
 * In a frame whose parent is of the same origin, the key of the <iframe> that holds it (the one the
 * parent's walk gives each frame slot, made here the same way if the parent's walk has not run
 * yet): the caller then knows which slot the frame fills without asking the browser for its
 * <iframe>, three round trips. A cross-origin frame cannot see its <iframe>, and says nothing.
 */
const OWNER =
  'try { const fe = window.frameElement; if (fe) { const pg = fe.ownerDocument.defaultView; if (!fe.__bfnKey) fe.__bfnKey = pg.__bfnFrameSeq = (pg.__bfnFrameSeq || 0) + 1; r.owner = fe.__bfnKey; } } catch {}';

/**
 * The read as JSON, with the time it left the page (epoch ms) as its last field, set after the
 * rest was stringified: the caller can tell the stringify and the trip apart (read-phases.ts).
 * It travels as pure ASCII (wire-text.ts; the making of that counts as the trip).
 */
const SEND =
  "const json = JSON.stringify(r); return f.wire(json.slice(0, -1) + ',\"sentAt\":' + (performance.timeOrigin + performance.now()) + '}');";

/**
 * The collector is compiled once per document and kept on a non-enumerable global; later calls
 * send only the options. Results travel as one JSON string: Playwright's own value serialisation
 * is far slower on big results.
 */
export const collectCall = (opts: CollectOptions, quietMs?: number, watch?: string): string =>
  `(() => { ${busyCheck(quietMs)} const f = globalThis.__bfnCollect; if (!f || f.v !== '${collectorVersion()}') return undefined; const t0 = performance.now(); const r = f(${JSON.stringify(opts)}); r.timing = [0, performance.now() - t0, performance.timeOrigin + t0]; ${OWNER} ${arming(watch)} ${SEND} })()`;

/**
 * What defines the collector in a document: built once per process (its sources never change).
 * The collector carries a digest of its own source (`v`): a page kept across calls (a remote
 * browser's, read by another deploy) may hold another version, and a call finds it only if it is
 * this one; any other gets this one installed.
 */
let installer: { source: string; version: string } | undefined;
function built(): { source: string; version: string } {
  if (installer) return installer;
  const body = `const __name = (f) => f; const sem = {}; for (const make of [${HELPERS.map((f) => `(${f.toString()})`).join(', ')}]) Object.assign(sem, make(sem)); const run = (${collect.toString()});
    const f = (opts) => run(opts, sem); f.wire = (${wireText.toString()});
    Object.defineProperty(globalThis, '__bfnArm', { value: (${armWatch.toString()}), configurable: true });`;
  const version = sha256Hex(body).slice(0, 12);
  installer = {
    version,
    source: `${body} f.v = '${version}'; Object.defineProperty(globalThis, '__bfnCollect', { value: f, configurable: true });`,
  };
  return installer;
}
const installSource = (): string => built().source;
const collectorVersion = (): string => built().version;

/** Elements the warm-up walk of the start script visits: enough to compile and profile the walk's paths. */
export const WARM_ELEMENTS = 600;

/**
 * The collector as a start script (browser/start-scripts.ts): defined in each top-level document
 * before the page's own code, so the first read sends only the call. Once the page has loaded and
 * the browser is idle, a warm-up walk (CollectOptions.warm: no ids, nothing kept) runs the
 * collector over the page's first elements, so that the first real read runs code the JIT has
 * already compiled and profiled rather than cold in the interpreter. A read that comes first makes
 * the warm-up moot, and it is skipped. The timers are taken at document start: a page that
 * replaces them later does not stop the warm-up. Child frames are left alone: most are ads and trackers
 * that are never read, and a read installs the collector in those that are.
 */
export const collectorAtStart = (): string =>
  `(() => { if (window.top !== window || globalThis.__bfnCollect?.v === '${collectorVersion()}') return; ${installSource()}
    const warm = () => { if (globalThis.__bfnSeen || globalThis.__bfnCollect !== f) return; try { run({ text: true, warm: ${WARM_ELEMENTS} }, sem); } catch {} };
    const ric = window.requestIdleCallback, later = window.setTimeout;
    const idle = () => (typeof ric === 'function' ? ric.call(window, warm, { timeout: 500 }) : later.call(window, warm, 0));
    addEventListener('load', idle, { once: true }); })()`;

export const collectInstall = (opts: CollectOptions, quietMs?: number, watch?: string): string =>
  `(() => { ${busyCheck(quietMs)} const t0 = performance.now(); ${installSource()}
    const t1 = performance.now(); const r = f(${JSON.stringify(opts)}); r.timing = [t1 - t0, performance.now() - t1, performance.timeOrigin + t0]; ${OWNER} ${arming(watch)} ${SEND} })()`;

export const resolveExpression = (chain: string, mark: boolean): string =>
  expression(resolveLocator, { chain, mark });
