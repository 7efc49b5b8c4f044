import type { Citation } from '../../extension/chat/protocol';
import { h } from './dom';
import { post } from './messages';
import { codeTokens, plainWhy } from './text';

/** A place's code shows this many lines until it is expanded. */
const PREVIEW_LINES = 6;

/**
 * Citations as `path:start-end` links that ask the host to open and highlight those lines. They are
 * buttons dressed as links: VS Code's webview frame takes over clicks on real `<a href>` elements.
 */

interface Target {
  readonly folder: string;
  readonly path: string;
  readonly startLine: number;
  readonly endLine: number;
}

function citationLink(
  target: Target,
  text = `${target.path}:${target.startLine}-${target.endLine}`,
): HTMLButtonElement {
  const link = h(
    'button',
    {
      type: 'button',
      class: 'citation',
      'data-testid': 'citation',
      title: `Open ${target.path}, lines ${target.startLine}–${target.endLine}`,
    },
    text,
  );
  link.addEventListener('click', () => {
    post({
      type: 'openCitation',
      folder: target.folder,
      path: target.path,
      startLine: target.startLine,
      endLine: target.endLine,
    });
  });
  return link;
}

/** The "Sources" list under an answer: each citation with why it was cited. */
export function sourcesList(citations: readonly Citation[]): HTMLElement | null {
  if (citations.length === 0) return null;
  const items = citations.map((citation) =>
    h(
      'li',
      {},
      citationLink(citation),
      citation.why ? h('span', { class: 'why' }, ` — ${citation.why}`) : null,
    ),
  );
  return h(
    'section',
    { class: 'sources', 'aria-label': 'Sources' },
    h('h3', {}, 'Sources'),
    h('ul', {}, ...items),
  );
}

/**
 * The places of an answer written without a model: each one's link, why it matters in plain
 * words, and its code (a few lines, highlighted, expandable to all the lines the chat received).
 */
export function placesList(citations: readonly Citation[]): HTMLElement | null {
  if (citations.length === 0) return null;
  const items = citations.map((citation) =>
    h(
      'li',
      { class: 'place', 'data-testid': 'place' },
      h(
        'div',
        { class: 'place-head' },
        citationLink(citation),
        citation.why ? h('span', { class: 'why' }, ` — ${plainWhy(citation.why)}`) : null,
      ),
      citation.code ? codePreview(citation.code, citation) : null,
    ),
  );
  return h(
    'section',
    { class: 'sources places', 'aria-label': 'Places' },
    h('h3', {}, 'Places'),
    h('ol', {}, ...items),
  );
}

function codePreview(code: string, citation: Citation): HTMLElement {
  const lines = code.split('\n');
  const shown = (all: boolean) => (all ? lines : lines.slice(0, PREVIEW_LINES)).join('\n');
  const codeElement = h('code', {});
  const draw = (all: boolean) =>
    codeElement.replaceChildren(
      ...codeTokens(shown(all), citation.path).map((token) =>
        token.kind === 'plain' ? token.text : h('span', { class: `tok-${token.kind}` }, token.text),
      ),
    );
  draw(false);
  const pre = h(
    'pre',
    {
      class: 'place-code',
      'data-testid': 'place-code',
      'data-start-line': String(citation.startLine),
    },
    codeElement,
  );
  if (lines.length <= PREVIEW_LINES) return pre;
  const toggle = h(
    'button',
    {
      type: 'button',
      class: 'link-button',
      'aria-expanded': 'false',
      'data-testid': 'place-expand',
    },
    `Show all ${lines.length} lines`,
  );
  toggle.addEventListener('click', () => {
    const expand = toggle.getAttribute('aria-expanded') !== 'true';
    draw(expand);
    toggle.setAttribute('aria-expanded', String(expand));
    toggle.textContent = expand ? 'Show less' : `Show all ${lines.length} lines`;
  });
  return h('div', { class: 'place-code-block' }, pre, toggle);
}

/** `src/a.ts:12-20` or `src/a.ts:12` (an en dash too); the path part is checked against the citations. */
const MENTION = /([\w@+.-]+(?:\/[\w@+.-]+)*):(\d+)(?:[-–](\d+))?/g;

/**
 * Turns mentions of cited spans in the rendered answer into citation links. A mention counts when
 * its path is a cited path (or that path's tail) and its lines overlap a citation of that file;
 * it opens the lines the text mentions, in the cited file's folder.
 */
export function linkMentions(root: HTMLElement, citations: readonly Citation[]): void {
  if (citations.length === 0) return;
  for (const node of textNodes(root)) {
    const pieces = splitMentions(node.data, citations);
    if (pieces.some((piece) => typeof piece !== 'string'))
      node.replaceWith(
        ...pieces.map((piece) =>
          typeof piece === 'string' ? piece : citationLink(piece.target, piece.text),
        ),
      );
  }
}

/**
 * Text outside links and code: inline `code` is kept (answers often cite spans in backticks), and
 * so are code blocks without a language (a call flow); code in a language is left as written.
 */
function textNodes(root: HTMLElement): Text[] {
  const walker = document.createTreeWalker(root, NodeFilter.SHOW_TEXT, {
    acceptNode: (node) =>
      node.parentElement?.closest('a, button, .mermaid-block, pre code[class*="language-"]')
        ? NodeFilter.FILTER_REJECT
        : NodeFilter.FILTER_ACCEPT,
  });
  const nodes: Text[] = [];
  while (walker.nextNode()) nodes.push(walker.currentNode as Text);
  return nodes;
}

type Piece = string | { readonly text: string; readonly target: Target };

function splitMentions(text: string, citations: readonly Citation[]): Piece[] {
  const pieces: Piece[] = [];
  let last = 0;
  for (const match of text.matchAll(MENTION)) {
    const [whole, path = '', start = '', end = start] = match;
    const target = resolve(path, Number(start), Number(end), citations);
    if (!target) continue;
    pieces.push(text.slice(last, match.index), { text: whole, target });
    last = match.index + whole.length;
  }
  pieces.push(text.slice(last));
  return pieces.filter((piece) => piece !== '');
}

/**
 * Where a mention points: the cited file it names (its tail is enough), or, for a file the
 * citations do not include, that path in the cited folder when it looks like a file (has an
 * extension), so every `path:line` in an answer opens.
 */
function resolve(
  path: string,
  startLine: number,
  endLine: number,
  citations: readonly Citation[],
): Target | null {
  if (startLine < 1 || endLine < startLine) return null;
  const citation =
    citations.find(
      (candidate) =>
        (candidate.path === path || candidate.path.endsWith(`/${path}`)) &&
        startLine <= candidate.endLine &&
        endLine >= candidate.startLine,
    ) ??
    citations.find((candidate) => candidate.path === path || candidate.path.endsWith(`/${path}`));
  if (citation) return { folder: citation.folder, path: citation.path, startLine, endLine };
  const folder = citations[0]?.folder;
  return folder && /\.[A-Za-z]\w*$/.test(path) && !path.startsWith('.')
    ? { folder, path, startLine, endLine }
    : null;
}
