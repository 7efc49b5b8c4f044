import { getLogger } from '../log/logger';
import { indexTerms } from '../text/tokenize';

/**
 * Every query enters here first: code blocks are set apart from the prose, and what points into
 * the code is pulled out — identifiers, file paths, structural words, and the anchors of an error
 * (exception types, quoted messages, stack-trace frames). Nothing raw reaches routing or retrieval.
 */
export interface StackFrame {
  readonly file: string;
  readonly line: number;
  readonly function: string | null;
}

export interface ErrorAnchors {
  readonly exceptionTypes: readonly string[];
  /** Messages quoted in the question or following an exception type. */
  readonly messages: readonly string[];
  readonly frames: readonly StackFrame[];
  /** HTTP-like status codes mentioned with an error (401, 404, 500 …). */
  readonly statusCodes: readonly string[];
}

export interface ParsedQuery {
  readonly rawInput: string;
  /** The question with code blocks replaced by a placeholder. */
  readonly naturalLanguage: string;
  readonly attachedFilePath: string | null;
  readonly attachedFileContent: string | null;
  readonly pastedCode: string | null;
  readonly pastedCodeLanguage: string | null;
  /** Code-shaped names: snake_case, camelCase, PascalCase, dotted.names, calls(), `backticked`. */
  readonly extractedIdentifiers: readonly string[];
  readonly extractedFilePaths: readonly string[];
  readonly extractedKeywords: readonly string[];
  readonly errorAnchors: ErrorAnchors;
  readonly hasCodeBlock: boolean;
  readonly isMixed: boolean;
  /** True when the input was longer than MAX_QUERY_CHARACTERS and was cut. */
  readonly truncated: boolean;
}

export interface Attachment {
  readonly path: string;
  readonly content: string;
  /** The file line the content starts on, for a selection (1 for a whole file). */
  readonly startLine?: number;
}

/**
 * Questions beyond this many characters (a pasted log, a whole file) are cut down to it, keeping
 * the beginning (the question, usually) and the end (where a pasted trace has its innermost frames
 * and the error).
 */
export const MAX_QUERY_CHARACTERS = 16_000;
export const QUERY_TAIL_CHARACTERS = 4_000;

export const STOP_WORDS = new Set([
  'the',
  'and',
  'for',
  'with',
  'this',
  'that',
  'what',
  'how',
  'does',
  'from',
  'into',
  'about',
  'which',
  'when',
  'where',
  'why',
  'who',
  'whom',
  'whose',
  'are',
  'was',
  'were',
  'been',
  'being',
  'have',
  'has',
  'had',
  'did',
  'doing',
  'can',
  'could',
  'should',
  'would',
  'will',
  'shall',
  'may',
  'might',
  'must',
  'its',
  'their',
  'them',
  'they',
  'there',
  'then',
  'than',
  'but',
  'not',
  'nor',
  'any',
  'all',
  'some',
  'each',
  'every',
  'other',
  'such',
  'only',
  'own',
  'same',
  'too',
  'very',
  'just',
  'also',
  'out',
  'off',
  'over',
  'under',
  'again',
  'once',
  'here',
  'you',
  'your',
  'yours',
  'our',
  'ours',
  'his',
  'her',
  'hers',
  'him',
  'she',
  'him',
  'mine',
  'myself',
  'after',
  'before',
  'while',
  'until',
  'because',
  'though',
  'both',
  'either',
  'neither',
  'is',
  'be',
  'do',
  'in',
  'on',
  'of',
  'to',
  'it',
  'as',
  'at',
  'by',
  'or',
  'if',
  'an',
  'me',
  'my',
  'we',
  'so',
  'no',
  'up',
  'get',
  'gets',
  'got',
  'use',
  'uses',
  'used',
  'using',
  'happen',
  'happens',
  'happening',
  'way',
  'ways',
  'thing',
  'things',
  'something',
  'anything',
  'whether',
  'like',
  'want',
  'need',
  'needs',
  'make',
  'makes',
  'work',
  'works',
  'working',
  'without',
  'still',
  'even',
  'instead',
  'rather',
  'between',
  'through',
  'during',
  'where',
  'what',
  'code',
  'i',
  'a',
  'per',
  'via',
]);

/** Words of Python, JavaScript and TypeScript that are never names of the user's code. */
export const LANGUAGE_KEYWORDS = new Set([
  'def',
  'class',
  'return',
  'import',
  'function',
  'var',
  'let',
  'const',
  'type',
  'interface',
  'public',
  'private',
  'protected',
  'static',
  'async',
  'await',
  'yield',
  'lambda',
  'self',
  'this',
  'None',
  'True',
  'False',
  'null',
  'undefined',
  'true',
  'false',
  'new',
  'delete',
  'typeof',
  'instanceof',
  'void',
  'export',
  'default',
  'extends',
  'implements',
  'super',
  'raise',
  'throw',
  'try',
  'except',
  'catch',
  'finally',
  'else',
  'elif',
  'while',
  'for',
  'pass',
  'break',
  'continue',
  'with',
  'from',
  'global',
  'nonlocal',
  'assert',
  'switch',
  'case',
]);

const STRUCTURAL_KEYWORDS = [
  'class',
  'function',
  'method',
  'file',
  'module',
  'directory',
  'folder',
  'package',
  'struct',
  'interface',
  'import',
  'decorator',
  'async',
  'constructor',
  'property',
  'attribute',
  'variable',
  'callback',
  'handler',
  'route',
  'endpoint',
];

const FILE_PATH =
  /(?:^|[\s"'`(,])((?:[\w.-]+\/)*[\w.-]*\w\.(?:py|pyi|js|jsx|mjs|cjs|ts|tsx|go|java|rs|cs|cpp|cc|hpp|h|c|rb|php))\b/g;
const CODE_BLOCK = /```([\w+#-]*)[^\n]*\n([\s\S]*?)(?:```|$)/g;
const BACKTICKED = /`([^`\n]{1,120})`/g;
const WORD = /[\p{L}_$][\p{L}\p{N}_$]*(?:\.[\p{L}_$][\p{L}\p{N}_$]*)*(\()?/gu;
const EXCEPTION = /\b((?:[A-Za-z_]\w*\.)*[A-Z]\w*(?:Error|Exception|Warning|Exit|Interrupt))\b/g;
const QUOTED = /"([^"\n]{3,300})"|'([^'\n]{8,300})'|“([^”\n]{3,300})”|‘([^’\n]{8,300})’/g;
const AFTER_EXCEPTION = /\b[A-Z]\w*(?:Error|Exception|Warning)\s*[:(]\s*([^\n"'“]{6,300})/g;
const PYTHON_FRAME = /File "([^"]+)", line (\d+)(?:, in ([\w<>.]+))?/g;
const JS_FRAME = /\bat (?:([\w$.<>[\] ]+?) \()?((?:[A-Za-z]:)?[^\s():]+\.\w+):(\d+)(?::\d+)?\)?/g;
const STATUS_CODE = /\b([45]\d\d)\b/g;

const log = getLogger('search.preprocess');

export function preprocessQuery(input: string, attachment?: Attachment): ParsedQuery {
  const truncated = input.length > MAX_QUERY_CHARACTERS;
  const raw = truncated
    ? `${input.slice(0, MAX_QUERY_CHARACTERS - QUERY_TAIL_CHARACTERS)}\n…\n${input.slice(-QUERY_TAIL_CHARACTERS)}`
    : input;
  const blocks: { language: string | null; code: string }[] = [];
  const naturalLanguage = raw
    .replace(CODE_BLOCK, (_match, language: string, code: string) => {
      blocks.push({ language: language || null, code });
      return ' [code block] ';
    })
    .replace(/\s+/g, ' ')
    .trim();
  const pastedCode = blocks.length ? blocks.map((block) => block.code).join('\n') : null;
  const filePaths = unique(
    [...naturalLanguage.matchAll(FILE_PATH)]
      .map((match) => match[1]!)
      .filter((path) => !/^\d/.test(path)),
  );
  const errorAnchors = anchorsOf(raw);
  const identifiers = unique([
    ...codeShapedNames(naturalLanguage),
    ...(pastedCode ? allNames(pastedCode) : []),
    ...filePaths.map(stemOf).filter((stem) => stem.length > 2),
    ...errorAnchors.exceptionTypes.map((type) => type.slice(type.lastIndexOf('.') + 1)),
    ...errorAnchors.frames.flatMap((frame) =>
      frame.function ? [frame.function.slice(frame.function.lastIndexOf('.') + 1)] : [],
    ),
  ]).filter((name) => !STOP_WORDS.has(name.toLowerCase()) && !LANGUAGE_KEYWORDS.has(name));
  const lower = naturalLanguage.toLowerCase();
  const keywords = STRUCTURAL_KEYWORDS.filter((keyword) =>
    new RegExp(`\\b${keyword}(e?s)?\\b`).test(lower),
  );
  const prose = naturalLanguage.replace(/\[code block\]/g, '').trim();
  const parsed: ParsedQuery = {
    rawInput: raw,
    naturalLanguage,
    attachedFilePath: attachment?.path ?? null,
    attachedFileContent: attachment?.content ?? null,
    pastedCode,
    pastedCodeLanguage: blocks[0]?.language ?? null,
    extractedIdentifiers: identifiers,
    extractedFilePaths: filePaths,
    extractedKeywords: keywords,
    errorAnchors,
    hasCodeBlock: blocks.length > 0,
    isMixed: blocks.length > 0 && prose.length > 0,
    truncated,
  };
  log.info('query_preprocessed', {
    raw_input_length: input.length,
    has_code_block: parsed.hasCodeBlock,
    is_mixed: parsed.isMixed,
    identifiers_extracted: parsed.extractedIdentifiers,
    file_paths_extracted: parsed.extractedFilePaths,
    keywords_extracted: parsed.extractedKeywords,
    exception_types: errorAnchors.exceptionTypes,
    error_messages: errorAnchors.messages,
    stack_frames: errorAnchors.frames.length,
    truncated,
  });
  if (log.enabled('debug')) log.debug('parsed_query_full', { ...parsed });
  return parsed;
}

/** Terms of the prose for lexical search: identifier-aware, stop words dropped. */
export function queryTerms(text: string): string[] {
  return indexTerms(text).filter((term) => !STOP_WORDS.has(term));
}

/**
 * Names that look like code in prose: with an underscore or `$`, camelCase or PascalCase with two
 * humps, dotted (`app.route`), called (`echo()`), or in backticks.
 */
function codeShapedNames(text: string): string[] {
  const names: string[] = [];
  for (const match of text.matchAll(BACKTICKED)) names.push(...allNames(match[1]!));
  for (const match of text.matchAll(WORD)) {
    const word = match[0].replace(/\($/, '');
    const called = !!match[1];
    const parts = word.split('.');
    const shaped = called || parts.length > 1 || parts.some(isCodeShaped);
    if (!shaped) continue;
    if (parts.length > 1 && parts.every((part) => /^[a-z]+$/.test(part)) && !called) {
      // "e.g." or a sentence boundary without a space, not a dotted name, unless a part is code-shaped.
      if (parts.some((part) => part.length < 2)) continue;
    }
    names.push(word, ...parts.filter((part) => part.length > 2));
  }
  return names;
}

function isCodeShaped(word: string): boolean {
  return (
    /[_$]/.test(word) ||
    /[a-z][A-Z]/.test(word) ||
    /^[A-Z][a-z]+[A-Z]/.test(word) ||
    (/^[A-Z][A-Z0-9_]{2,}$/.test(word) && word.includes('_'))
  );
}

/** Every identifier of a piece of code. */
function allNames(code: string): string[] {
  return [...code.matchAll(/[\p{L}_$][\p{L}\p{N}_$]{2,}/gu)].map((match) => match[0]);
}

function anchorsOf(text: string): ErrorAnchors {
  const exceptionTypes = unique([...text.matchAll(EXCEPTION)].map((match) => match[1]!));
  const messages = unique(
    [
      ...[...text.matchAll(QUOTED)].map((match) => (match[1] ?? match[2] ?? match[3] ?? match[4])!),
      ...[...text.matchAll(AFTER_EXCEPTION)].map((match) => match[1]!),
    ]
      .map((message) => message.replace(/\s+/g, ' ').trim())
      .filter((message) => /\s/.test(message) || message.length > 12),
  );
  const frames: StackFrame[] = [
    ...[...text.matchAll(PYTHON_FRAME)].map((match) => ({
      file: match[1]!,
      line: Number(match[2]),
      function: match[3] ?? null,
    })),
    ...[...text.matchAll(JS_FRAME)].map((match) => ({
      file: match[2]!,
      line: Number(match[3]),
      function: match[1]?.trim() || null,
    })),
  ];
  const statusCodes =
    exceptionTypes.length || /\b(error|status|returns?|fails?|response)\b/i.test(text)
      ? unique([...text.matchAll(STATUS_CODE)].map((match) => match[1]!))
      : [];
  return { exceptionTypes, messages, frames, statusCodes };
}

function stemOf(path: string): string {
  const name = path.slice(path.lastIndexOf('/') + 1);
  return name.slice(0, name.indexOf('.') > 0 ? name.indexOf('.') : name.length);
}

function unique<T>(values: readonly T[]): T[] {
  return [...new Set(values)];
}
