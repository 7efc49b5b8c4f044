import { MODULE_QUALIFIED_NAME, type CodeFact } from '../model';

/*
 * Questions an index can ask itself after opening, so that the first questions a user asks run
 * on compiled code: until the JIT has seen the search's code run a few dozen times, a question
 * takes several times as long (at 10k files the first five after opening took 15–88 ms, against
 * 10–32 ms after thirty such questions). They are made from the index's own definitions, spread
 * over its files, one of each kind the search routes differently: a definition's name, the first
 * line of a docstring, a message the code raises, and who calls a function.
 */

/** Where the questions come from: the calls graph's files and each one's definitions. */
export interface FactSource {
  files(): Iterable<string>;
  factsInFile(path: string): readonly CodeFact[];
}

/** Words a docstring line or a message needs to read as a sentence, not a name. */
const MIN_WORDS = 3;
/** Longer lines are cut here: a warm-up question need not be a long one. */
const MAX_CHARACTERS = 120;

type Kind = (fact: CodeFact) => string | null;

const KINDS: readonly Kind[] = [
  (fact) => (isDefinition(fact) ? fact.name : null),
  (fact) => sentence(fact.docstring?.trim().split('\n')[0] ?? ''),
  (fact) => sentence(fact.errorStrings[0] ?? ''),
  (fact) => (isDefinition(fact) && fact.kind !== 'class' ? `who calls ${fact.name}` : null),
];

/**
 * Up to `perKind` questions of each kind, in turn (a name, a docstring line, a message, a callers
 * question, then the next of each), at most one of each kind per file, the files taken at even
 * steps through the index's order. Always the same questions for the same index.
 */
export function warmUpQuestions(source: FactSource, perKind: number): string[] {
  const paths = [...source.files()];
  const found: string[][] = KINDS.map(() => []);
  const step = Math.max(1, Math.floor(paths.length / perKind));
  for (let offset = 0; offset < step && !found.every((list) => list.length >= perKind); offset++) {
    for (let at = offset; at < paths.length; at += step) {
      const facts = source.factsInFile(paths[at]!);
      KINDS.forEach((kind, k) => {
        if (found[k]!.length >= perKind) return;
        for (const fact of facts) {
          const question = kind(fact);
          if (question === null || found[k]!.includes(question)) continue;
          found[k]!.push(question);
          return;
        }
      });
    }
  }
  const questions: string[] = [];
  for (let turn = 0; turn < perKind; turn++)
    for (const list of found) if (turn < list.length) questions.push(list[turn]!);
  return questions;
}

function isDefinition(fact: CodeFact): boolean {
  return fact.qualifiedName !== MODULE_QUALIFIED_NAME && fact.kind !== 'module';
}

/** `text` when it reads as a sentence of at least MIN_WORDS words, cut to MAX_CHARACTERS. */
function sentence(text: string): string | null {
  const words = text.trim().split(/\s+/).filter(Boolean);
  return words.length >= MIN_WORDS ? words.join(' ').slice(0, MAX_CHARACTERS) : null;
}
