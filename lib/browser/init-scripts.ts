/**
 * Scripts every page of our contexts runs before its own code. They only observe; pages behave
 * exactly as without them.
 */

/**
 * Records closed shadow roots as they are attached so the snapshot can see inside them. Installed
 * as an init script on every context we create; pages keep working exactly as before.
 */
export const SHADOW_ROOT_HOOK = `(() => {
  if (globalThis.__bfnShadowRoots) return;
  const roots = new WeakMap();
  Object.defineProperty(globalThis, '__bfnShadowRoots', { value: roots, enumerable: false });
  const attach = Element.prototype.attachShadow;
  Element.prototype.attachShadow = function (init) {
    const root = attach.call(this, init);
    roots.set(this, root);
    return root;
  };
})();`;

/**
 * Records which elements get click-type listeners through `addEventListener`, the way most pages
 * wire a `<span>` or `<div>` that acts as a button or link; the snapshot reads the record to give
 * such elements a role. The listener is still added exactly as asked; only a reference to it is
 * kept (its source tells a link from a button), a few per element at most.
 */
export const CLICK_LISTENER_HOOK = `(() => {
  if (globalThis.__bfnClickers) return;
  const clickers = new WeakMap();
  Object.defineProperty(globalThis, '__bfnClickers', { value: clickers, enumerable: false });
  const types = new Set(['click', 'mousedown', 'mouseup', 'pointerdown', 'pointerup', 'touchstart', 'touchend', 'dblclick']);
  const proto = EventTarget.prototype;
  const add = proto.addEventListener;
  const patched = {
    addEventListener(type, listener, options) {
      if (listener && this && this.nodeType === 1 && types.has(type)) {
        const list = clickers.get(this);
        if (!list) clickers.set(this, [listener]);
        else if (list.length < 4) list.push(listener);
      }
      return add.call(this, type, listener, options);
    },
  }.addEventListener;
  Object.defineProperty(proto, 'addEventListener', { value: patched, writable: true, configurable: true, enumerable: true });
})();`;

/**
 * How much earlier than it happened a change made while the document loads (the parser, its
 * scripts, DOMContentLoaded and load handlers) is stamped. All of that is done when the load event
 * is, so a page read after it need not wait a whole quiet window after its parser's last insert:
 * only what is left of it (50 ms of the default 200) after the later of that change and the load
 * event, time for a render the load queued for the next frame or tick to show up and then be waited
 * out in full. Changes after the load — timers, responses, anything that adds content late — are
 * stamped when they happen.
 */
export const LOAD_TIME_CREDIT_MS = 150;

/**
 * Keeps `__bfnLastMutation` up to date inside the page, so "has the DOM been quiet for N ms?" is a
 * single cheap read instead of a fresh wait on every call. Changes made while the document loads
 * count LOAD_TIME_CREDIT_MS earlier (see there); a document with no navigation timing of an
 * http(s) or file load (about:blank, one written by script) gets no credit.
 */
export const MUTATION_CLOCK = `(() => {
  if (globalThis.__bfnLastMutation !== undefined) return;
  const nav = performance.getEntriesByType('navigation')[0];
  let loading = !!nav && !(nav.loadEventEnd > 0) && /^(https?|file):$/.test(location.protocol);
  const stamp = () => {
    const now = performance.now();
    if (loading && nav.loadEventEnd > 0) loading = false;
    return loading ? now - ${LOAD_TIME_CREDIT_MS} : now;
  };
  globalThis.__bfnLastMutation = stamp();
  // The load itself counts as a change made while loading: a read waits out what is left of the
  // window after it, whatever the DOM did before.
  if (loading) addEventListener('load', () => { globalThis.__bfnLastMutation = Math.max(globalThis.__bfnLastMutation, stamp()); }, true);
  const obs = new MutationObserver(() => { globalThis.__bfnLastMutation = stamp(); });
  obs.observe(document, { subtree: true, childList: true, attributes: true, characterData: true });
})()`;

/**
 * Our TypeScript runs under tsx/esbuild, which wraps named inner functions as `__name(fn, "x")`.
 * Functions we hand to `evaluate` carry that call into the page, where no `__name` exists; this
 * identity stand-in makes them run. Defined only when the page has none of its own.
 */
export const NAME_SHIM = `(() => {
  if (typeof globalThis.__name === 'undefined')
    Object.defineProperty(globalThis, '__name', { value: (f) => f, configurable: true, writable: true });
})()`;

/**
 * For browsers we do not launch (remote CDP), where no launch flag of ours reaches: WebRTC would
 * send UDP from the remote browser's network to any address a page names, past the request-level
 * guard. Removing the constructors stops it; Chromium runs init scripts in fresh frames and popups
 * too, so a page cannot fetch a pristine copy from an `about:blank` iframe.
 */
export const NO_WEBRTC = `(() => {
  // WebTransport rides on QUIC (UDP) and no request interception sees it either.
  for (const name of ['RTCPeerConnection', 'webkitRTCPeerConnection', 'RTCIceTransport', 'WebTransport']) {
    try { delete globalThis[name]; } catch {}
  }
})()`;

/**
 * The hooks above as one script, the first every page of ours runs. In a browser we did not launch
 * (`remote`) it also removes WebRTC, which our launch flag keeps home in ours. Start scripts
 * (start-scripts.ts) follow it; NAV_INTENT runs as a script of its own.
 */
export function pageHooks(remote: boolean): string {
  const hooks = [NAME_SHIM, SHADOW_ROOT_HOOK, CLICK_LISTENER_HOOK, MUTATION_CLOCK];
  return (remote ? [NO_WEBRTC, ...hooks] : hooks).join(';\n');
}

/**
 * Notes the URL of a navigation this document starts (a link, a form, `location = …`, a refresh)
 * the moment it starts, via the Navigation API: the browser's network events for it may come
 * later than the click returns on a busy machine, and an action must not call a page done when
 * it is about to be replaced (or refused by the guard). Read and cleared by `takeNavIntent`.
 */
export const NAV_INTENT = `(() => {
  if (globalThis.__bfnNavIntent !== undefined || !globalThis.navigation || window.top !== window) return;
  Object.defineProperty(globalThis, '__bfnNavIntent', { value: null, writable: true, enumerable: false });
  navigation.addEventListener('navigate', (e) => {
    const to = e.destination;
    // Only a new document over http(s): SPA route changes and hash jumps load nothing; a web page
    // cannot open file: (the browser refuses it), so nothing would come to wait for.
    if (to && !to.sameDocument && !e.hashChange && !e.downloadRequest && /^https?:/.test(to.url))
      globalThis.__bfnNavIntent = to.url;
  });
})()`;

/** Reads and clears the navigation the main document started, if any. */
export const TAKE_NAV_INTENT = `(() => {
  const url = globalThis.__bfnNavIntent ?? null;
  if (url !== null) globalThis.__bfnNavIntent = null;
  return url;
})()`;
