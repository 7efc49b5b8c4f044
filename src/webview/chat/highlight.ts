/**
 * The composer's highlighting: splits the question into plain text, ``` fenced blocks and inline
 * `code`, and draws them into the layer under the (transparent) textarea.
 */
interface Segment {
  readonly kind: 'text' | 'fence' | 'code';
  readonly text: string;
}

const FENCE = /^ {0,3}```/;
const INLINE_CODE = /`[^`\n]+`/g;

/**
 * A fence runs from a line starting with ``` to the next such line (or the end, while it is still
 * being typed). Each fence segment owns the newline that ends it, and the text before a fence ends
 * with its newline, so the fence can be drawn as a block without moving any line.
 */
function segments(text: string): Segment[] {
  const result: Segment[] = [];
  const lines = text.split(/(?<=\n)/);
  let plain = '';
  let fence: string | null = null;
  for (const line of lines) {
    if (fence === null) {
      if (FENCE.test(line)) {
        result.push(...inline(plain));
        plain = '';
        fence = line;
      } else plain += line;
    } else {
      fence += line;
      if (FENCE.test(line)) {
        result.push({ kind: 'fence', text: fence });
        fence = null;
      }
    }
  }
  if (fence !== null) result.push({ kind: 'fence', text: fence });
  result.push(...inline(plain));
  return result.filter((segment) => segment.text !== '');
}

function inline(text: string): Segment[] {
  const result: Segment[] = [];
  let last = 0;
  for (const match of text.matchAll(INLINE_CODE)) {
    result.push(
      { kind: 'text', text: text.slice(last, match.index) },
      { kind: 'code', text: match[0] },
    );
    last = match.index + match[0].length;
  }
  result.push({ kind: 'text', text: text.slice(last) });
  return result;
}

/** Fills `layer` with the highlighted copy of `text`, built from text nodes only. */
export function drawHighlight(layer: HTMLElement, text: string): void {
  const nodes: Node[] = segments(text).map((segment) => {
    if (segment.kind === 'text') return document.createTextNode(segment.text);
    const element = document.createElement(segment.kind === 'fence' ? 'div' : 'span');
    element.className = `hl-${segment.kind}`;
    element.textContent = segment.text;
    return element;
  });
  // A final newline makes a line in a textarea but not in a div: give the div something to put there.
  if (text.endsWith('\n') || text === '') nodes.push(document.createTextNode(' '));
  layer.replaceChildren(...nodes);
}
