import DOMPurify from 'dompurify';
import MarkdownIt from 'markdown-it';
import { h, icon } from './dom';
import { post } from './messages';
import { renderMermaid } from './mermaid';
import { protectIdentifiers, sanitizeMermaidSource } from './text';

/** A diagram with more nodes than this is drawn capped in the sidebar and offered in a tab. */
const LARGE_DIAGRAM_NODES = 15;

/**
 * Answer text → sanitised DOM. Model output is untrusted: markdown-it runs with raw HTML off and
 * DOMPurify cleans its output before it reaches the page.
 */
const md = new MarkdownIt({ html: false, linkify: true });
// Only links with a scheme: to linkify's fuzzy matching `README.md` and `main.go` look like domains.
md.linkify.set({ fuzzyLink: false });

md.renderer.rules.fence = (tokens, index) => {
  const token = tokens[index];
  if (!token) return '';
  const language = token.info.trim().split(/\s+/)[0] ?? '';
  const languageClass = language ? ` class="language-${md.utils.escapeHtml(language)}"` : '';
  const code = `<pre><code${languageClass}>${md.utils.escapeHtml(token.content)}</code></pre>`;
  return `<div class="${language === 'mermaid' ? 'mermaid-block' : 'code-block'}">${code}</div>\n`;
};

export function renderMarkdown(text: string): DocumentFragment {
  const fragment = DOMPurify.sanitize(md.render(protectIdentifiers(text)), {
    RETURN_DOM_FRAGMENT: true,
  });
  for (const block of fragment.querySelectorAll<HTMLElement>('.code-block, .mermaid-block')) {
    block.appendChild(copyButton(block));
  }
  return fragment;
}

function copyButton(block: HTMLElement): HTMLButtonElement {
  const button = h(
    'button',
    { type: 'button', class: 'copy icon-button', 'aria-label': 'Copy code', title: 'Copy code' },
    icon('copy'),
  );
  button.addEventListener('click', () => {
    const code = block.querySelector('code')?.textContent ?? '';
    navigator.clipboard.writeText(code).then(
      () => flash(button, 'Copied'),
      () => flash(button, 'Copy failed'),
    );
  });
  return button;
}

/** Swaps the icon for a word for a moment, so the click visibly did something. */
function flash(button: HTMLButtonElement, word: string): void {
  button.replaceChildren(word);
  button.setAttribute('aria-label', word);
  setTimeout(() => {
    button.replaceChildren(icon('copy'));
    button.setAttribute('aria-label', 'Copy code');
  }, 1500);
}

/**
 * Draws every ```mermaid block under `root`; a block that does not render keeps its code.
 * Run again after a theme change to redraw in the new colours.
 */
export async function drawDiagrams(root: ParentNode): Promise<void> {
  for (const block of root.querySelectorAll<HTMLElement>('.mermaid-block')) {
    const source = block.querySelector('code')?.textContent ?? '';
    const svg = await renderMermaid(sanitizeMermaidSource(source));
    if (!svg) continue;
    const diagram = h('div', { class: 'mermaid-diagram', role: 'img', 'aria-label': 'Diagram' });
    diagram.appendChild(svg);
    block.querySelector('.mermaid-diagram')?.remove();
    block.querySelector('.open-diagram')?.remove();
    block.prepend(diagram);
    block.classList.add('drawn');
    const large = diagram.querySelectorAll('g.node').length > LARGE_DIAGRAM_NODES;
    block.classList.toggle('large', large);
    if (large) diagram.after(openInTab(diagram));
  }
}

function openInTab(diagram: HTMLElement): HTMLButtonElement {
  const button = h(
    'button',
    { type: 'button', class: 'chip open-diagram', 'data-testid': 'open-diagram' },
    'Open the full diagram in a tab',
  );
  button.addEventListener('click', () =>
    post({ type: 'openDiagram', svg: diagram.querySelector('svg')?.outerHTML ?? '' }),
  );
  return button;
}
