import type { CDPSession, Page } from 'playwright-core';

/** The name of the world content reading runs in; the page's scripts never see it. */
const WORLD_NAME = 'switchboard-content';
const OBJECT_GROUP = 'switchboard-content';

/**
 * The main frame's isolated world over a DevTools session of its own: a JavaScript context that
 * shares the page's DOM but none of its globals or prototypes. Playwright's `evaluate` runs in the
 * main world, where the page can replace any built-in; this does not.
 */
export class IsolatedWorld {
  private constructor(
    private readonly cdp: CDPSession,
    private readonly contextId: number,
  ) {}

  static async open(page: Page): Promise<IsolatedWorld> {
    const cdp = await page.context().newCDPSession(page);
    try {
      const { frameTree } = await cdp.send('Page.getFrameTree');
      const { executionContextId } = await cdp.send('Page.createIsolatedWorld', {
        frameId: frameTree.frame.id,
        worldName: WORLD_NAME,
        grantUniveralAccess: false,
      });
      return new IsolatedWorld(cdp, executionContextId);
    } catch (error) {
      await cdp.detach().catch(() => undefined);
      throw error;
    }
  }

  /** Evaluates `expression` (awaiting a promise) and keeps its value in the page; its handle. */
  async evaluateHandle(expression: string): Promise<string> {
    const { result, exceptionDetails } = await this.cdp.send('Runtime.evaluate', {
      expression,
      contextId: this.contextId,
      awaitPromise: true,
      returnByValue: false,
      objectGroup: OBJECT_GROUP,
    });
    if (exceptionDetails) throw pageException(exceptionDetails);
    if (!result.objectId) throw new Error('The isolated world returned no object.');
    return result.objectId;
  }

  /** `function` applied to the object behind `handle` (as `this`) with `args`, its value copied out. */
  async call<T>(handle: string, fn: string, ...args: unknown[]): Promise<T> {
    const { result, exceptionDetails } = await this.cdp.send('Runtime.callFunctionOn', {
      objectId: handle,
      functionDeclaration: fn,
      arguments: args.map((value) => ({ value })),
      returnByValue: true,
    });
    if (exceptionDetails) throw pageException(exceptionDetails);
    return result.value as T;
  }

  /** Frees what the world kept for this session and closes the DevTools session. */
  async dispose(): Promise<void> {
    await this.cdp.send('Runtime.releaseObjectGroup', { objectGroup: OBJECT_GROUP }).catch(() => undefined);
    await this.cdp.detach().catch(() => undefined);
  }
}

function pageException(details: { text: string; exception?: { description?: string } }): Error {
  return new Error(
    `Content extraction failed in the page: ${details.exception?.description ?? details.text}`,
  );
}
