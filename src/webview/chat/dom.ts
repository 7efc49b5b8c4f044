/**
 * Element construction for the chat. Everything the chat shows is built here with DOM calls and
 * `textContent`, so no host or model text ever passes through an HTML parser unsanitised.
 */

type Props = Record<string, string | boolean | undefined>;
type Child = Node | string | null | undefined | false;

/** `h('button', { class: 'x', 'data-testid': 'send' }, 'Send')`: attributes, then children. */
export function h<K extends keyof HTMLElementTagNameMap>(
  tag: K,
  props: Props = {},
  ...children: Child[]
): HTMLElementTagNameMap[K] {
  const element = document.createElement(tag);
  for (const [name, value] of Object.entries(props)) {
    if (value === undefined || value === false) continue;
    element.setAttribute(name, value === true ? '' : value);
  }
  append(element, children);
  return element;
}

function append(parent: Node, children: readonly Child[]): void {
  for (const child of children) {
    if (child === null || child === undefined || child === false) continue;
    parent.appendChild(typeof child === 'string' ? document.createTextNode(child) : child);
  }
}

const SVG = 'http://www.w3.org/2000/svg';

/** Stroke paths on a 16×16 grid; the webview has no icon font, and these four are all it needs. */
const ICONS = {
  send: 'M8 13V3M3.5 7.5 8 3l4.5 4.5',
  stop: 'M4.5 4.5h7v7h-7z',
  attach: 'M10.5 4.5v6a2.5 2.5 0 0 1-5 0V4a1.5 1.5 0 0 1 3 0v6a.5.5 0 0 1-1 0V5',
  copy: 'M5.5 5.5h7v8h-7zM3.5 10.5v-8h7',
} as const;

type IconName = keyof typeof ICONS;

export function icon(name: IconName): SVGSVGElement {
  const svg = document.createElementNS(SVG, 'svg');
  svg.setAttribute('viewBox', '0 0 16 16');
  svg.setAttribute('aria-hidden', 'true');
  svg.setAttribute('class', `icon icon-${name}`);
  const path = document.createElementNS(SVG, 'path');
  path.setAttribute('d', ICONS[name]);
  svg.appendChild(path);
  return svg;
}

/** Shows or hides with the `hidden` attribute, which the stylesheet honours everywhere. */
export function show(element: HTMLElement, visible: boolean): void {
  element.hidden = !visible;
}
