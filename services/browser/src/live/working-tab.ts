import type { BrowserContext, Page } from 'playwright-core';

/** Chromium's own pages (WebUI, DevTools) live in the context too, but nobody works in them. */
const BROWSER_OWN_PAGE = /^(chrome|chrome-untrusted|devtools):/;

/**
 * Which tab a session works in, as a person watching it would expect: a tab opened in it (a
 * popup, or one a DevTools client made) is where the work goes next, until it closes or an API
 * call works in the session's own tab again. Closing a followed tab goes back to the newest
 * one still open.
 */
export class WorkingTab {
  /** Tabs opened since watching began, oldest first; the last one open is the current one. */
  private readonly opened: Page[] = [];
  private actionsSeen: number;

  constructor(
    private readonly context: BrowserContext,
    /** The tab the session's API calls (navigate, input, capture…) drive. */
    private readonly own: Page,
    /** How many API calls the session has run: a change brings the picture back to `own`. */
    private readonly actions: () => number,
  ) {
    this.actionsSeen = actions();
    context.on('page', this.onPage);
  }

  current(): Page {
    const actions = this.actions();
    if (actions !== this.actionsSeen) {
      this.actionsSeen = actions;
      this.opened.length = 0;
    }
    return this.opened.findLast((page) => !page.isClosed()) ?? this.own;
  }

  dispose(): void {
    this.context.off('page', this.onPage);
  }

  private readonly onPage = (page: Page): void => {
    if (page === this.own || BROWSER_OWN_PAGE.test(page.url())) return;
    this.opened.push(page);
    page.once('close', () => this.opened.splice(this.opened.indexOf(page), 1));
  };
}
