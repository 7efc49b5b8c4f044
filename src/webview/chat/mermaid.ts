import DOMPurify from 'dompurify';

/**
 * Mermaid diagrams. The library is ~3 MB, so it is a separate script the page loads only when an
 * answer first contains a diagram; its URL and the CSP nonce come from the chat's own script tag.
 */

/** The two calls the chat makes; typed here because the library arrives as a global, not an import. */
interface MermaidApi {
  initialize(config: Record<string, unknown>): void;
  render(id: string, source: string): Promise<{ svg: string }>;
}

declare global {
  interface Window {
    mermaid?: MermaidApi;
  }
}

export interface MermaidSource {
  readonly url: string;
  readonly nonce: string;
}

let source: MermaidSource | null = null;
let loading: Promise<MermaidApi | null> | null = null;
/** Mermaid keeps per-render globals, so renders run one after another. */
let queue: Promise<unknown> = Promise.resolve();
let counter = 0;

export function configureMermaid(from: MermaidSource | null): void {
  source = from;
}

function load(): Promise<MermaidApi | null> {
  loading ??= new Promise((resolve) => {
    if (!source) return resolve(null);
    const script = document.createElement('script');
    script.src = source.url;
    script.nonce = source.nonce;
    script.addEventListener('load', () => resolve(window.mermaid ?? null));
    script.addEventListener('error', () => resolve(null));
    document.head.appendChild(script);
  });
  return loading;
}

/** VS Code marks the theme on the body: vscode-light, vscode-dark, vscode-high-contrast(-light). */
export function isDarkTheme(): boolean {
  const classes = document.body.classList;
  return !classes.contains('vscode-light') && !classes.contains('vscode-high-contrast-light');
}

/**
 * Draws `diagram` as a sanitised SVG, or returns null when mermaid is unavailable
 * or the diagram does not parse (the caller keeps showing the code block).
 */
export function renderMermaid(diagram: string): Promise<DocumentFragment | null> {
  const result = queue.then(() => draw(diagram));
  queue = result;
  return result;
}

async function draw(diagram: string): Promise<DocumentFragment | null> {
  const mermaid = await load();
  if (!mermaid) return null;
  mermaid.initialize({
    startOnLoad: false,
    securityLevel: 'strict',
    theme: isDarkTheme() ? 'dark' : 'default',
    // SVG text labels rather than HTML in <foreignObject>, which the SVG sanitiser would strip.
    htmlLabels: false,
    flowchart: { htmlLabels: false },
    suppressErrorRendering: true,
  });
  const id = `mermaid-${++counter}`;
  try {
    const { svg } = await mermaid.render(id, diagram);
    // No links: VS Code's webview forwards clicks on <a> to the host, and an SVG link's href
    // (an SVGAnimatedString) cannot be cloned into that message (DataCloneError).
    return DOMPurify.sanitize(svg, {
      USE_PROFILES: { svg: true, svgFilters: true },
      FORBID_TAGS: ['a', 'foreignObject', 'script'],
      FORBID_ATTR: ['href', 'xlink:href', 'onclick'],
      RETURN_DOM_FRAGMENT: true,
    });
  } catch (error) {
    console.warn(
      `Code Oracle: mermaid diagram not drawn: ${error instanceof Error ? error.message : String(error)}`,
    );
    // A failed render can leave its scratch element in the body.
    document.getElementById(`d${id}`)?.remove();
    return null;
  }
}
