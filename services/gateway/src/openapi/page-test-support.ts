/**
 * Test support for the self-contained pages (/docs, /admin): static checks of their HTML, and a
 * small fake DOM that runs their inline script in a `vm` context so a test can drive the page.
 * Used by tests only.
 */
import assert from 'node:assert/strict';
import vm from 'node:vm';

export function inlineBlocks(html: string, tag: 'script' | 'style'): { open: string; source: string }[] {
  const pattern = new RegExp(`(<${tag}\\b[^>]*>)([\\s\\S]*?)</${tag}\\s*>`, 'gi');
  return [...html.matchAll(pattern)].map((m) => ({ open: m[1]!, source: m[2]! }));
}

/** The markup without the contents of <script> and <style>. */
function markupOnly(html: string): string {
  return html.replace(/(<(script|style)\b[^>]*>)[\s\S]*?(<\/\2\s*>)/gi, '$1$3');
}

/** No external resource, every <script>/<style> nonced, no inline handlers or style attributes, scripts parse. */
export function assertSelfContainedPage(html: string, nonce: string): void {
  assert.doesNotMatch(html, /https?:\/\//i, 'no http(s) URL anywhere in the page');
  const markup = markupOnly(html);
  assert.doesNotMatch(
    markup,
    /\s(?:src|href|action|formaction|srcset|poster|data|xlink:href)\s*=\s*["']?\s*(?:[a-z][a-z0-9+.-]*:|\/\/)/i,
    'no absolute resource URL',
  );
  assert.doesNotMatch(
    markup,
    /<(?:link|img|iframe|object|embed|base|audio|video|source)\b/i,
    'no tag that loads a resource',
  );
  assert.doesNotMatch(
    markup,
    /<[^>]+\son[a-z]+\s*=/i,
    'no inline event handler attributes (CSP blocks them)',
  );
  assert.doesNotMatch(markup, /<[^>]+\sstyle\s*=/i, 'no style attributes (CSP blocks them)');
  for (const { source } of inlineBlocks(html, 'style'))
    assert.doesNotMatch(source, /@import|url\s*\(/i, 'styles load nothing');

  const openings = [...html.matchAll(/<(script|style)\b[^>]*>/gi)].map((m) => m[0]);
  assert.ok(
    openings.some((o) => /^<script/i.test(o)) && openings.some((o) => /^<style/i.test(o)),
    'one script and one style at least',
  );
  for (const opening of openings) {
    assert.ok(opening.includes(` nonce="${nonce}"`), `${opening} carries the nonce`);
    assert.doesNotMatch(opening, /\ssrc\s*=/i, 'scripts are inline');
  }
  for (const { source } of inlineBlocks(html, 'script')) {
    assert.doesNotMatch(source, /<\/script/i);
    assert.doesNotThrow(() => new vm.Script(source), 'the inline script parses');
    assert.doesNotMatch(
      source,
      /\binnerHTML\b|\bouterHTML\b|insertAdjacentHTML|document\.write|\beval\s*\(|new Function/,
      'no HTML parsing or eval',
    );
  }
}

// ---------------------------------------------------------------------------------------------
// A fake DOM: just what the two pages use.

export class FakeText {
  parentNode: FakeElement | null = null;
  constructor(public data: string) {}
  get textContent(): string {
    return this.data;
  }
}

type Listener = (event: FakeEvent) => void;
export interface FakeEvent {
  type: string;
  target: FakeElement;
  defaultPrevented: boolean;
  preventDefault(): void;
}

export class FakeElement {
  readonly tagName: string;
  childNodes: (FakeElement | FakeText)[] = [];
  parentNode: FakeElement | null = null;
  readonly attributes = new Map<string, string>();
  private readonly listeners = new Map<string, Listener[]>();
  className = '';
  hidden = false;
  open = false;
  disabled = false;
  readOnly = false;
  value: unknown = '';
  max: unknown = 1;
  type = '';
  href = '';
  colSpan = 1;

  constructor(
    readonly ownerDocument: FakeDocument,
    tag: string,
  ) {
    this.tagName = tag.toUpperCase();
  }

  get id(): string {
    return this.attributes.get('id') ?? '';
  }
  set id(value: string) {
    this.attributes.set('id', value);
  }
  setAttribute(name: string, value: unknown): void {
    this.attributes.set(name, String(value));
  }
  getAttribute(name: string): string | null {
    return this.attributes.get(name) ?? null;
  }
  appendChild<T extends FakeElement | FakeText>(child: T): T {
    assert.ok(child instanceof FakeElement || child instanceof FakeText, 'only nodes are appended');
    if (child.parentNode)
      child.parentNode.childNodes = child.parentNode.childNodes.filter((c) => c !== child);
    child.parentNode = this;
    this.childNodes.push(child);
    return child;
  }
  replaceChildren(...nodes: (FakeElement | FakeText | string)[]): void {
    for (const child of this.childNodes) child.parentNode = null;
    this.childNodes = [];
    for (const node of nodes) this.appendChild(typeof node === 'string' ? new FakeText(node) : node);
  }
  get textContent(): string {
    return this.childNodes.map((c) => c.textContent).join('');
  }
  set textContent(value: string) {
    this.replaceChildren(...(String(value) === '' ? [] : [String(value)]));
  }
  addEventListener(type: string, listener: Listener): void {
    this.listeners.set(type, [...(this.listeners.get(type) ?? []), listener]);
  }
  /** Runs the listeners like a browser would for a user action; returns the event. */
  dispatch(type: string): FakeEvent {
    const event: FakeEvent = {
      type,
      target: this,
      defaultPrevented: false,
      preventDefault() {
        this.defaultPrevented = true;
      },
    };
    for (const listener of this.listeners.get(type) ?? []) listener.call(this, event);
    return event;
  }
  click(): void {
    if (!this.disabled) this.dispatch('click');
  }
  select(): void {}
  focus(): void {}
  *descendants(): Generator<FakeElement> {
    for (const child of this.childNodes) {
      if (child instanceof FakeElement) {
        yield child;
        yield* child.descendants();
      }
    }
  }
  /** Elements below this one whose text includes `text` (innermost first is not guaranteed). */
  findAll(predicate: (element: FakeElement) => boolean): FakeElement[] {
    return [...this.descendants()].filter(predicate);
  }
}

export class FakeDocument {
  title = '';
  readonly body: FakeElement;
  constructor() {
    this.body = new FakeElement(this, 'body');
  }
  createElement(tag: string): FakeElement {
    return new FakeElement(this, tag);
  }
  createTextNode(text: string): FakeText {
    return new FakeText(String(text));
  }
  getElementById(id: string): FakeElement | null {
    for (const element of this.body.descendants()) if (element.id === id) return element;
    return null;
  }
  getElementsByTagName(tag: string): FakeElement[] {
    return this.body.findAll((e) => e.tagName === tag.toUpperCase());
  }
  execCommand(): boolean {
    return false;
  }
}

export interface FakeResponseInit {
  status: number;
  body?: unknown;
}

export interface FetchCall {
  url: string;
  method: string;
  headers: Record<string, string>;
  body: unknown;
}

export interface PageRun {
  document: FakeDocument;
  byId(id: string): FakeElement;
  calls: FetchCall[];
  storage: Map<string, string>;
  intervals: Map<number, { fn: () => void; ms: number }>;
  /** Lets every pending promise of the page run. */
  settle(): Promise<void>;
}

export interface PageEnvironment {
  /** Answers the page's fetch calls. */
  respond(call: FetchCall): FakeResponseInit;
  storage?: Record<string, string>;
  confirm?: (message: string) => boolean;
  prompt?: (message: string, value: string) => string | null;
  clipboard?: string[];
}

/**
 * Runs a page's inline script in a fresh context over a fake DOM made of the page's elements
 * with an id (flat under <body>; the scripts only look elements up by id).
 */
export function runPage(html: string, env: PageEnvironment): PageRun {
  const document = new FakeDocument();
  for (const m of markupOnly(html).matchAll(
    /<([a-z0-9]+)\b([^>]*)\sid="([^"]+)"([^>]*)>([^<]*)(<\/\1>)?/gi,
  )) {
    const element = document.createElement(m[1]!);
    element.id = m[3]!;
    const attributes = ` ${m[2]} ${m[4]}`;
    element.hidden = /\shidden(\s|$|=)/.test(attributes);
    element.type = /\stype="([^"]*)"/.exec(attributes)?.[1] ?? '';
    element.value = /\svalue="([^"]*)"/.exec(attributes)?.[1] ?? '';
    if (m[6] && m[5]) element.textContent = m[5]; // plain text content, entities left as written
    document.body.appendChild(element);
  }
  const calls: FetchCall[] = [];
  const storage = new Map(Object.entries(env.storage ?? {}));
  const intervals = new Map<number, { fn: () => void; ms: number }>();
  let nextTimer = 1;
  const fetch = (
    url: string,
    init: { method?: string; headers?: Record<string, string>; body?: string } = {},
  ) => {
    const call: FetchCall = {
      url,
      method: init.method ?? 'GET',
      headers: Object.fromEntries(Object.entries(init.headers ?? {}).map(([k, v]) => [k.toLowerCase(), v])),
      body: init.body === undefined ? undefined : JSON.parse(init.body),
    };
    calls.push(call);
    const answer = env.respond(call);
    const text = answer.body === undefined ? '' : JSON.stringify(answer.body);
    return Promise.resolve({
      ok: answer.status >= 200 && answer.status < 300,
      status: answer.status,
      headers: {
        get: (name: string) => (name.toLowerCase() === 'content-type' && text ? 'application/json' : null),
      },
      text: () => Promise.resolve(text),
      json: () => Promise.resolve(JSON.parse(text)),
    });
  };
  const window: Record<string, unknown> = {
    addEventListener() {},
    confirm: env.confirm ?? (() => true),
    prompt: env.prompt ?? (() => null),
    alert() {},
  };
  const context = vm.createContext({
    window,
    document,
    location: { hash: '', pathname: '/' },
    navigator: { clipboard: { writeText: (text: string) => (env.clipboard?.push(text), Promise.resolve()) } },
    fetch,
    sessionStorage: {
      getItem: (k: string) => storage.get(k) ?? null,
      setItem: (k: string, v: string) => void storage.set(k, String(v)),
      removeItem: (k: string) => void storage.delete(k),
    },
    setInterval: (fn: () => void, ms: number) => {
      const id = nextTimer++;
      intervals.set(id, { fn, ms });
      return id;
    },
    clearInterval: (id: number) => void intervals.delete(id),
    setTimeout: (fn: () => void) => setImmediate(fn),
    console,
  });
  window.window = window;
  for (const { source } of inlineBlocks(html, 'script')) new vm.Script(source).runInContext(context);
  return {
    document,
    byId(id) {
      const element = document.getElementById(id);
      assert.ok(element, `#${id} exists`);
      return element;
    },
    calls,
    storage,
    intervals,
    async settle() {
      for (let i = 0; i < 20; i++) await new Promise((resolve) => setImmediate(resolve));
    },
  };
}
