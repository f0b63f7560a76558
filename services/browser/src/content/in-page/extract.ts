import type {
  DomDocument,
  DomElement,
  DomNode,
  FormControl,
  ReadabilityLibrary,
  WorldGlobals,
} from './dom.js';

export interface ExtractParams {
  html: boolean;
  text: boolean;
  links: boolean;
  metadata: boolean;
  /** The pruned HTML the worker turns into Markdown. */
  markdownSource: boolean;
  selector: string | null;
  selectorTimeoutMs: number;
  mainContent: boolean;
  maxBytes: number;
  /** A larger bound for the Markdown source: its markup is dropped in conversion. */
  markdownSourceMaxBytes: number;
}

export interface PageLink {
  url: string;
  text: string;
}

export interface PageMetadata {
  title: string;
  description: string | null;
  lang: string | null;
  canonical_url: string | null;
  og: Record<string, string>;
}

/** The big strings, read one by one so no single DevTools message carries them all. */
export type BigField = 'html' | 'text' | 'markdownSource';

export interface ExtractResult {
  url: string;
  title: string;
  html?: string;
  text?: string;
  markdownSource?: string;
  links?: PageLink[];
  metadata?: PageMetadata;
  /** The formats cut at their bound. */
  truncated: string[];
  warnings: string[];
  /** Set instead of the formats when the selector is at fault. */
  selectorError?: 'element_not_found' | 'invalid_selector';
}

/**
 * Runs inside the page, in an isolated world: every DOM wrapper and prototype here is the world's
 * own, so a page that overrides `Array.prototype.map`, `Node.prototype.textContent` or
 * `document.querySelectorAll` in its main world changes nothing here and sees nothing of it. Work
 * that changes the DOM (reflecting form state, pruning for Markdown, Readability) happens on copies
 * imported into a document made with `createHTMLDocument`: such a document has no browsing context,
 * so nothing in it loads, runs, upgrades a custom element or fires a page's MutationObserver.
 *
 * Serialised with `Function.prototype.toString`, so it must stay self-contained: no imports at run
 * time, helpers nested inside.
 */
export async function extractInIsolatedWorld(
  readability: ReadabilityLibrary | undefined,
  p: ExtractParams,
): Promise<ExtractResult> {
  const { document, XMLSerializer, getComputedStyle } = globalThis as unknown as WorldGlobals;
  const truncated: string[] = [];
  const warnings: string[] = [];
  const encoder = new TextEncoder();
  const base = document.baseURI;

  /** Cut to `max` UTF-8 bytes on a character boundary, before anything leaves the page. */
  const cap = (value: string, max: number, format: string): string => {
    if (value.length * 3 <= max) return value;
    const { read } = encoder.encodeInto(value, new Uint8Array(max));
    if (read >= value.length) return value;
    truncated.push(format);
    return value.slice(0, read);
  };
  const utf8Length = (value: string): number => {
    let bytes = 0;
    for (let i = 0; i < value.length; i++) {
      const unit = value.charCodeAt(i);
      if (unit < 0x80) bytes += 1;
      else if (unit < 0x800) bytes += 2;
      else if (unit >= 0xd800 && unit < 0xdc00 && i + 1 < value.length) {
        bytes += 4;
        i++;
      } else bytes += 3;
    }
    return bytes;
  };
  const absolute = (href: string, protocols?: readonly string[]): string | null => {
    try {
      const url = new URL(href, base);
      return !protocols || protocols.includes(url.protocol) ? url.href : null;
    } catch {
      return null;
    }
  };
  const collapse = (value: string): string => value.replace(/\s+/g, ' ').trim();
  const isElement = (node: DomNode): node is DomElement => node.nodeType === 1;
  const visibleText = (element: DomElement): string => element.innerText ?? element.textContent ?? '';

  // --- The root: the whole document, or what the selector matches (waiting for it to appear).
  let live: DomElement = document.documentElement;
  if (p.selector !== null) {
    const deadline = Date.now() + p.selectorTimeoutMs;
    let found: DomElement | null = null;
    for (;;) {
      try {
        found = document.querySelector(p.selector);
      } catch {
        return {
          url: document.URL,
          title: document.title,
          truncated,
          warnings,
          selectorError: 'invalid_selector',
        };
      }
      if (found || Date.now() >= deadline) break;
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    if (!found) {
      return {
        url: document.URL,
        title: document.title,
        truncated,
        warnings,
        selectorError: 'element_not_found',
      };
    }
    live = found;
  }
  const result: ExtractResult = { url: document.URL, title: document.title, truncated, warnings };

  if (p.metadata) {
    // The page's own description, whatever the selector: it lives in <head>, outside any subtree.
    const meta = (selector: string) => document.querySelector(selector)?.getAttribute('content') ?? null;
    const og: Record<string, string> = {};
    const ogTags = document.querySelectorAll(
      'meta[property^="og:" i][content], meta[name^="og:" i][content]',
    );
    for (let i = 0; i < ogTags.length; i++) {
      const tag = ogTags[i]!;
      const key = (tag.getAttribute('property') ?? tag.getAttribute('name') ?? '').slice(3).toLowerCase();
      // The first of a repeated property (og:image) is the page's main one.
      if (key && !(key in og)) og[key] = tag.getAttribute('content') ?? '';
    }
    const canonical = document.querySelector('link[rel~="canonical" i][href]')?.getAttribute('href');
    result.metadata = {
      title: document.title,
      description: meta('meta[name="description" i][content]'),
      lang: document.documentElement.getAttribute('lang') || null,
      canonical_url: canonical ? absolute(canonical, ['http:', 'https:']) : null,
      og,
    };
  }

  const needCopy = p.html || p.markdownSource || (p.mainContent && (p.text || p.links));
  if (!needCopy) {
    if (p.text) result.text = cap(visibleText(live), p.maxBytes, 'text');
    if (p.links) result.links = collectLinks(live);
    return result;
  }

  // --- An inert copy with the live form state written into attributes, so it serialises.
  const inert = (): DomDocument => document.implementation.createHTMLDocument('');
  const copyDoc = inert();
  const copy = copyDoc.importNode(live, true);
  if (copy.localName === 'html') copyDoc.replaceChild(copy, copyDoc.documentElement);
  else copyDoc.body?.appendChild(copy);
  reflectFormState(live, copy);
  // Elements the page does not show, by their place in document order (the copies share it).
  const hidden = p.markdownSource || p.mainContent ? hiddenElements(live) : [];

  // --- main_content: Readability on a second copy (it rewrites what it is given).
  let content: DomElement = copy;
  let contentIsWholePage = true;
  if (p.mainContent && readability) {
    const readDoc = inert();
    if (copy.localName === 'html') {
      readDoc.replaceChild(readDoc.importNode(copy, true), readDoc.documentElement);
    } else {
      readDoc.body?.appendChild(readDoc.importNode(copy, true));
    }
    // Readability leaves out what carries `hidden`; what the page hides by its style is as invisible.
    const readCopy = copy.localName === 'html' ? readDoc.documentElement : readDoc.body!.querySelector('*')!;
    const readElements = readCopy.querySelectorAll('*');
    for (const index of hidden) readElements[index]?.setAttribute('hidden', '');
    let article: ReturnType<InstanceType<ReadabilityLibrary['Readability']>['parse']> = null;
    try {
      // "Nothing found" is a document without article-like text (paragraphs of some length), not
      // merely an empty answer: on a page of menus Readability would pick the biggest menu.
      if (readability.isProbablyReaderable(readDoc, { minContentLength: 100, minScore: 10 })) {
        article = new readability.Readability(readDoc, {
          serializer: (element) => element,
          keepClasses: true,
          // Readability's time grows faster than the page; past this it throws and the whole
          // page is the answer, as when it finds nothing.
          maxElemsToParse: 100_000,
        }).parse();
      }
    } catch {
      article = null;
    }
    if (article?.content && collapse(article.textContent ?? '') !== '') {
      content = article.content;
      contentIsWholePage = false;
      absolutizeArticle(content);
    } else {
      warnings.push('main_content_empty');
    }
  }

  if (p.html) {
    let html = content.outerHTML;
    if (content === copy && copy.localName === 'html' && document.doctype) {
      html = `${new XMLSerializer().serializeToString(document.doctype)}\n${html}`;
    }
    result.html = cap(html, p.maxBytes, 'html');
  }
  if (p.text) {
    // Visible text of the live page; Readability's article is not rendered, so read it block-wise.
    result.text = cap(contentIsWholePage ? visibleText(live) : blockText(content), p.maxBytes, 'text');
  }
  if (p.links) result.links = collectLinks(contentIsWholePage ? live : content);
  if (p.markdownSource) {
    if (content === copy) {
      absolutize(live, copy);
      const elements = copy.querySelectorAll('*');
      for (const index of hidden) elements[index]?.remove();
    }
    // The whole page: its body's content; a selected element or the article: the element itself.
    const body = content.localName === 'html' ? content.querySelector('body') : null;
    pruneForMarkdown(body ?? content);
    const source = body ? body.innerHTML : content.outerHTML;
    result.markdownSource = cap(source, p.markdownSourceMaxBytes, 'markdown');
  }
  return result;

  function reflectFormState(from: DomElement, to: DomElement): void {
    const controls = 'input, textarea, select, option';
    const sources = [from, ...Array.from(from.querySelectorAll(controls))].filter((e) => e.matches(controls));
    const targets = [to, ...Array.from(to.querySelectorAll(controls))].filter((e) => e.matches(controls));
    // The copy has the same shape as the original, so the two lists pair up one to one.
    for (let i = 0; i < sources.length && i < targets.length; i++) {
      const source = sources[i] as FormControl;
      const target = targets[i]!;
      switch (source.localName) {
        case 'input':
          if (source.type === 'checkbox' || source.type === 'radio') {
            if (source.checked) target.setAttribute('checked', '');
            else target.removeAttribute('checked');
          } else if (source.type === 'password' || source.type === 'file') {
            // A password typed into a logged-in session is not page content; a file path is fake.
            target.removeAttribute('value');
          } else {
            target.setAttribute('value', source.value);
          }
          break;
        case 'textarea':
          target.textContent = source.value;
          break;
        case 'option':
          if (source.selected) target.setAttribute('selected', '');
          else target.removeAttribute('selected');
          break;
        default:
          break;
      }
    }
  }

  /** Indexes (in `root.querySelectorAll('*')` order) of the elements that are not rendered. */
  function hiddenElements(root: DomElement): number[] {
    const elements = root.querySelectorAll('*');
    const indexes: number[] = [];
    for (let i = 0; i < elements.length; i++) {
      const element = elements[i]!;
      // `display: contents` has no box of its own, yet its children show.
      if (!element.checkVisibility() && getComputedStyle(element).display !== 'contents') indexes.push(i);
    }
    return indexes;
  }

  /**
   * Links and images of the copy made absolute, each from its live original's own resolution
   * against the page's base (native, so fast on huge pages: the copy's inert document has no base
   * to resolve against). Until the copy is pruned the two trees pair up one to one.
   */
  function absolutize(from: DomElement, to: DomElement): void {
    for (const [selector, name] of [
      ['a[href], area[href]', 'href'],
      ['img[src]', 'src'],
    ] as const) {
      const originals = from.querySelectorAll(selector);
      const copies = to.querySelectorAll(selector);
      for (let i = 0; i < originals.length && i < copies.length; i++) {
        const url = (originals[i] as DomElement & Record<typeof name, string>)[name];
        if (/^javascript:/i.test(url)) copies[i]!.removeAttribute(name);
        else copies[i]!.setAttribute(name, url);
      }
    }
  }

  /**
   * The article's links and images made absolute. An inert document ignores `<base>` (its base is
   * about:blank, so Readability's own fixing leaves relative URLs as they were): resolved here.
   */
  function absolutizeArticle(root: DomElement): void {
    for (const [selector, name] of [
      ['a[href], area[href]', 'href'],
      ['img[src]', 'src'],
    ] as const) {
      const elements = root.querySelectorAll(selector);
      for (let i = 0; i < elements.length; i++) {
        const url = absolute(elements[i]!.getAttribute(name) ?? '');
        if (url && !/^javascript:/i.test(url)) elements[i]!.setAttribute(name, url);
        else elements[i]!.removeAttribute(name);
      }
    }
  }

  function collectLinks(root: DomElement): PageLink[] {
    const links: PageLink[] = [];
    const anchors = root.querySelectorAll('a[href], area[href]');
    let bytes = 2;
    for (let i = 0; i < anchors.length; i++) {
      const anchor = anchors[i]!;
      // The live element's own resolution against the page's base: native, so fast on huge pages
      // (the article's links were made absolute before).
      const url = (anchor as DomElement & { readonly href: string }).href;
      if (!/^(https?|mailto):/i.test(url)) continue;
      const text =
        collapse(anchor.textContent ?? '') ||
        collapse(anchor.getAttribute('aria-label') ?? anchor.getAttribute('title') ?? '') ||
        collapse(anchor.querySelector('img[alt]')?.getAttribute('alt') ?? '');
      // The link as it will be sent: its JSON, plus a comma.
      bytes += utf8Length(JSON.stringify({ url, text })) + 1;
      if (bytes > p.maxBytes) {
        truncated.push('links');
        break;
      }
      links.push({ url, text });
    }
    return links;
  }

  /** Text of a node that is not rendered: block elements on their own lines, `<pre>` kept as is. */
  function blockText(root: DomElement): string {
    const paragraphs = /^(p|h[1-6]|blockquote|table|pre)$/;
    const blocks =
      /^(address|article|aside|dd|div|dl|dt|fieldset|figcaption|figure|footer|form|header|hr|li|main|nav|ol|section|tr|ul)$/;
    const parts: string[] = [];
    // Preformatted text keeps its whitespace: set aside, put back after the collapsing.
    const preserved: string[] = [];
    // An explicit stack: a deep tree must not exhaust the call stack.
    const stack: (DomNode | string)[] = [root];
    while (stack.length > 0) {
      const item = stack.pop()!;
      if (typeof item === 'string') {
        parts.push(item);
        continue;
      }
      if (item.nodeType === 3) {
        parts.push((item.textContent ?? '').replace(/[\s\uE000-\uE002]+/g, ' '));
        continue;
      }
      if (!isElement(item)) continue;
      const name = item.localName;
      if (name === 'script' || name === 'style' || name === 'template' || name === 'noscript') continue;
      if (name === 'br') {
        parts.push('\n');
        continue;
      }
      if (name === 'pre') {
        preserved.push(item.textContent ?? '');
        parts.push(`\uE002\uE000${preserved.length - 1}\uE000\uE002`);
        continue;
      }
      // Paragraphs and headings stand apart by a blank line (marked \uE002), other blocks by a line
      // break (\uE001); the marks between two blocks merge into one separator.
      const edge = paragraphs.test(name) ? '\uE002' : blocks.test(name) ? '\uE001' : '';
      stack.push(edge || (name === 'td' || name === 'th' ? '\t' : ''));
      for (let i = item.childNodes.length - 1; i >= 0; i--) stack.push(item.childNodes[i]!);
      if (edge) stack.push(edge);
    }
    return parts
      .join('')
      .replace(/[ \t\n\uE001\uE002]*[\n\uE001\uE002][ \t\n\uE001\uE002]*/g, (run) =>
        run.includes('\uE002') || run.split('\n').length > 2 ? '\n\n' : '\n',
      )
      .replace(/\uE000(\d+)\uE000/g, (_match, index: string) => preserved[Number(index)] ?? '')
      .trim();
  }

  /**
   * Drops what Markdown never shows, makes links and images absolute and keeps only the attributes
   * the converter reads, so the source that leaves the page is small. Child frames are not
   * inlined: their documents may be cross-origin, and even same-origin ones are separate pages, so
   * each becomes a link to its own address.
   */
  function pruneForMarkdown(root: DomElement): void {
    const dropped = root.querySelectorAll(
      'script, style, template, noscript, link, meta, base, svg, canvas, select, textarea, button',
    );
    for (let i = 0; i < dropped.length; i++) dropped[i]!.remove();
    const frames = root.querySelectorAll('iframe, frame');
    for (let i = 0; i < frames.length; i++) {
      const frame = frames[i]!;
      const src = absolute(frame.getAttribute('src') ?? '', ['http:', 'https:']);
      if (!src) {
        frame.remove();
        continue;
      }
      const anchor = copyDoc.createElement('a');
      anchor.setAttribute('href', src);
      anchor.textContent = collapse(frame.getAttribute('title') ?? '') || src;
      const paragraph = copyDoc.createElement('p');
      paragraph.appendChild(anchor);
      frame.replaceWith(paragraph);
    }
    const keep = /^(href|src|alt|title|colspan|rowspan|align|start|type|checked|role|aria-checked)$/;
    for (const element of [root, ...Array.from(root.querySelectorAll('*'))]) {
      for (const name of element.getAttributeNames()) {
        if (name === 'class') {
          // Only the classes that name a code block's language.
          const languages = (element.getAttribute('class') ?? '')
            .split(/\s+/)
            .filter((c) => /^(language-|lang-|highlight-)/.test(c));
          if (languages.length > 0) element.setAttribute('class', languages.join(' '));
          else element.removeAttribute('class');
        } else if (!keep.test(name)) {
          element.removeAttribute(name);
        }
      }
    }
  }
}
