// The few DOM shapes the isolated-world extractor touches. The worker compiles without the DOM
// library (it is a Node program), so the code that runs inside the page declares what it uses here.
// Types only: nothing of this file exists at run time.

export interface DomNode {
  readonly nodeType: number;
  readonly nodeName: string;
  readonly childNodes: ArrayLike<DomNode>;
  readonly parentNode: DomNode | null;
  textContent: string | null;
}

export interface DomElement extends DomNode {
  readonly localName: string;
  readonly attributes: ArrayLike<{ readonly name: string; readonly value: string }>;
  readonly outerHTML: string;
  /** Absent on elements of an XML document (an SVG or a feed opened directly). */
  readonly innerText?: string;
  innerHTML: string;
  getAttribute(name: string): string | null;
  getAttributeNames(): string[];
  setAttribute(name: string, value: string): void;
  removeAttribute(name: string): void;
  querySelector(selector: string): DomElement | null;
  querySelectorAll(selector: string): ArrayLike<DomElement>;
  matches(selector: string): boolean;
  checkVisibility(): boolean;
  appendChild(node: DomNode): DomNode;
  replaceWith(...nodes: DomNode[]): void;
  remove(): void;
}

/** What `<input>`, `<textarea>`, `<select>` and `<option>` add: their live state. */
export interface FormControl extends DomElement {
  readonly type: string;
  readonly value: string;
  readonly checked: boolean;
  readonly selected: boolean;
}

export interface DomDocument extends DomNode {
  readonly documentElement: DomElement;
  readonly head: DomElement | null;
  readonly body: DomElement | null;
  readonly doctype: DomNode | null;
  readonly title: string;
  readonly baseURI: string;
  readonly URL: string;
  readonly implementation: { createHTMLDocument(title: string): DomDocument };
  importNode<T extends DomNode>(node: T, deep: boolean): T;
  createElement(localName: string): DomElement;
  querySelector(selector: string): DomElement | null;
  querySelectorAll(selector: string): ArrayLike<DomElement>;
  replaceChild(node: DomNode, child: DomNode): DomNode;
}

/** The isolated world's own globals (its own wrappers: the page's main world cannot reach them). */
export interface WorldGlobals {
  readonly document: DomDocument;
  readonly XMLSerializer: new () => { serializeToString(node: DomNode): string };
  getComputedStyle(this: void, element: DomElement): { readonly display: string };
}

export interface ReadabilityArticle {
  readonly content: DomElement | null;
  readonly textContent: string | null;
}

/** `@mozilla/readability`'s class and check, as its sources define them inside the isolated world. */
export interface ReadabilityLibrary {
  Readability: new (
    doc: DomDocument,
    options: {
      serializer: (element: DomElement) => DomElement;
      keepClasses: boolean;
      maxElemsToParse: number;
    },
  ) => { parse(): ReadabilityArticle | null };
  isProbablyReaderable(doc: DomDocument, options: { minContentLength: number; minScore: number }): boolean;
}
