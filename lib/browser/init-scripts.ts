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
 * Keeps `__bfnLastMutation` up to date inside the page, so "has the DOM been quiet for N ms?" is a
 * single cheap read instead of a fresh wait on every call.
 */
export const MUTATION_CLOCK = `(() => {
  if (globalThis.__bfnLastMutation !== undefined) return;
  globalThis.__bfnLastMutation = performance.now();
  const obs = new MutationObserver(() => { globalThis.__bfnLastMutation = performance.now(); });
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
