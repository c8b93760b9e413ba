/**
 * Runs INSIDE a page (serialised like collect()), right after a walk of its main document.
 *
 * Arms a one-shot notice for that read: the first DOM mutation or state-changing event after it
 * calls `notifyName` (a CDP binding the server added) once, with `<document token>:<change count>`. The server can then reuse the read for as long as no notice came, with no round trip to
 * ask. Returns the token and count at the read, or undefined when the binding is missing (then
 * the read is never reused).
 */
export interface WatchMark {
  doc: string;
  seq: number;
}

export function armWatch(notifyName: string): WatchMark | undefined {
  type Watch = { doc: string; seq: number; armed: boolean; observer: MutationObserver };
  const g = globalThis as unknown as Record<string, unknown>;
  let watch = g.__bfnWatch as Watch | undefined;
  if (!watch) {
    // Taken once, when the watch is set up, and the global removed: the page neither sees it from
    // then on nor can replace it to mute the notice.
    const notify = g[notifyName];
    if (typeof notify !== 'function') return undefined;
    try {
      delete g[notifyName];
    } catch {
      // Not configurable: it stays, and still works.
    }
    const doc = `${Date.now().toString(36)}${Math.random().toString(36).slice(2)}`;
    const state: Watch = { doc, seq: 0, armed: false, observer: undefined as unknown as MutationObserver };
    const changed = () => {
      state.seq++;
      if (!state.armed) return;
      state.armed = false;
      try {
        (notify as (payload: string) => void)(`${state.doc}:${state.seq}`);
      } catch {
        // The binding is gone (page closing): nothing left to keep fresh.
      }
    };
    state.observer = new MutationObserver(changed);
    state.observer.observe(document, {
      subtree: true,
      childList: true,
      attributes: true,
      characterData: true,
    });
    // What changes a read without touching the DOM tree: typed values, ticks, scrolling, focus,
    // layout from late images and fonts, CSS transitions and animations, the window's size.
    const onDocument = [
      'input',
      'change',
      'reset',
      'scroll',
      'focusin',
      'focusout',
      'load',
      'error',
      'toggle',
      'transitionrun',
      'transitionend',
      'animationstart',
      'animationend',
      'animationiteration',
      'visibilitychange',
      'fullscreenchange',
    ];
    for (const type of onDocument) document.addEventListener(type, changed, { capture: true, passive: true });
    for (const type of ['resize', 'scroll', 'hashchange', 'popstate', 'pageshow'])
      window.addEventListener(type, changed, { capture: true, passive: true });
    document.fonts?.addEventListener?.('loadingdone', changed);
    Object.defineProperty(g, '__bfnWatch', { value: state, configurable: true });
    watch = state;
  }
  // Records still queued are changes the walk already saw.
  watch.observer.takeRecords();
  watch.armed = true;
  return { doc: watch.doc, seq: watch.seq };
}
