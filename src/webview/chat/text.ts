/**
 * The chat's text transformations, kept free of the DOM so they can be tested on their own:
 * what a diagram may contain, which words are identifiers, and how a search reason reads.
 */

/** `<br>` is Mermaid's line break in labels; every other tag in a label is shown as text. */
const LABEL_TAG = /<(?!br\s*\/?>)(\/?[a-z!][^<>]*)>/gi;
/** Lines that make a diagram do something: open links, call functions, change its configuration. */
const ACTIVE_LINE = /^\s*(click|href|call)\b|^\s*%%\{/i;
const UNSAFE_URL = /\b(?:javascript|data|vbscript|https?|file|command):[^\s"'\]|]*/gi;

/**
 * A diagram from an answer (model output: untrusted) made inert before Mermaid sees it: `click`
 * and init directives are dropped, tags in labels become text (Mermaid's `#lt;`/`#gt;` entities),
 * and URLs are removed, so no label can add an element, a handler or a link to the page.
 */
export function sanitizeMermaidSource(source: string): string {
  return source
    .split('\n')
    .filter((line) => !ACTIVE_LINE.test(line))
    .map((line) => line.replace(LABEL_TAG, '#lt;$1#gt;').replace(UNSAFE_URL, ''))
    .join('\n');
}

/** Fenced blocks and inline code spans, which are already code and must stay as they are. */
const CODE_PARTS =
  /(^ {0,3}(`{3,}|~{3,})[^\n]*\n[\s\S]*?(?:^ {0,3}\2[^\n]*$|(?![\s\S]))|`+[^`\n]*`+)/gm;
/**
 * A name whose last part starts with an underscore (`__init__`, `Flask.__init__`, `_private`,
 * `self._cache`): Markdown would read the underscores as emphasis and show a bold "init".
 */
const UNDERSCORED_NAME = /(?<![\w`*\\/])((?:[A-Za-z_]\w*\.)*_+[A-Za-z0-9]\w*(?:\(\))?)(?![\w`])/g;

/** Puts identifiers Markdown would mangle into code spans, outside code that is already code. */
export function protectIdentifiers(markdown: string): string {
  let result = '';
  let last = 0;
  for (const match of markdown.matchAll(CODE_PARTS)) {
    result += markdown.slice(last, match.index).replace(UNDERSCORED_NAME, '`$1`');
    result += match[0];
    last = match.index + match[0].length;
  }
  return result + markdown.slice(last).replace(UNDERSCORED_NAME, '`$1`');
}

export interface TextPart {
  readonly code: boolean;
  readonly text: string;
}

/** `Who calls \`create_user\`?` → text and code parts, for chips that show code as code. */
export function inlineCodeParts(text: string): TextPart[] {
  return text
    .split(/(`[^`]+`)/)
    .filter((part) => part !== '')
    .map((part) =>
      /^`[^`]+`$/.test(part)
        ? { code: true, text: part.slice(1, -1) }
        : { code: false, text: part },
    );
}

/**
 * A search reason in plain words. The search explains a place as `function X: matches a, b;
 * calls Y; called from Z; similar in meaning (0.79)`; a reader wants what the place does
 * and how it connects: "Defines function X · calls Y · is called by Z".
 */
export function plainWhy(why: string): string {
  const [head, ...rest] = why.split(/;\s*/);
  const parts: string[] = [];
  const definition = /^(function|method|class|file|directory)\s+([^:]+):\s*(.*)$/.exec(head ?? '');
  const reasons = definition ? [definition[3]!, ...rest] : [head ?? '', ...rest];
  if (definition) parts.push(`defines ${definition[1]} ${definition[2]!.trim()}`);
  const mentions: string[] = [];
  for (const reason of reasons.map((text) => text.trim()).filter(Boolean)) {
    const matched = /^matches (.+)$/.exec(reason);
    if (matched) mentions.push(...matched[1]!.split(/,\s*/));
    else if (/^similar in meaning/.test(reason)) parts.push('is close in meaning to the question');
    else if (/^called from /.test(reason))
      parts.push(reason.replace(/^called from /, 'is called by '));
    else parts.push(reason);
  }
  if (mentions.length) parts.push(`mentions ${mentions.join(', ')}`);
  const sentence = parts.join(' · ');
  return sentence ? sentence.charAt(0).toUpperCase() + sentence.slice(1) : why;
}

export interface CodeToken {
  readonly kind: 'keyword' | 'string' | 'comment' | 'number' | 'plain';
  readonly text: string;
}

const KEYWORDS = new Set(
  (
    'def class return if elif else for while in not and or import from as with try except finally raise ' +
    'yield lambda pass break continue async await None True False self function const let var new this ' +
    'throw catch switch case default export extends implements interface type enum public private ' +
    'protected static void null undefined true false func package go defer struct fn impl pub use mut ' +
    'match trait where namespace using end module require do then begin rescue'
  ).split(' '),
);
/** Comments (hash, double slash, slash-star blocks), strings ('', "", ``, triple quotes), numbers and words, in one pass. */
const CODE_TOKEN =
  /(\/\*[\s\S]*?\*\/|\/\/[^\n]*|#[^\n]*)|("""[\s\S]*?"""|'''[\s\S]*?'''|"(?:\\.|[^"\\\n])*"|'(?:\\.|[^'\\\n])*'|`(?:\\.|[^`\\])*`)|(\b\d[\d_.]*\b)|([A-Za-z_]\w*)/g;

/**
 * A light highlighting of a few lines of code: enough to tell keywords, strings and comments
 * apart in any of the indexed languages, without a grammar per language. `#` starts a comment
 * only in languages where it does.
 */
export function codeTokens(code: string, path: string): CodeToken[] {
  const hashComments = /\.(py|pyi|rb|sh|ya?ml|toml|r|pl)$/i.test(path);
  const tokens: CodeToken[] = [];
  let last = 0;
  const plain = (text: string) => {
    if (text) tokens.push({ kind: 'plain', text });
  };
  for (const match of code.matchAll(CODE_TOKEN)) {
    const [whole, comment, string, number, word] = match;
    if (comment && comment.startsWith('#') && !hashComments) {
      // `#include`, `#[derive]`, `#private`: not a comment here; the word after it still counts.
      continue;
    }
    plain(code.slice(last, match.index));
    last = match.index + whole.length;
    if (comment) tokens.push({ kind: 'comment', text: whole });
    else if (string) tokens.push({ kind: 'string', text: whole });
    else if (number) tokens.push({ kind: 'number', text: whole });
    else tokens.push({ kind: word && KEYWORDS.has(word) ? 'keyword' : 'plain', text: whole });
  }
  plain(code.slice(last));
  return tokens;
}
