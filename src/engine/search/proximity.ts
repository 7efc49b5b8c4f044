import { camelSnakeTokenize } from '../text/tokenize';
import { Generations } from '../util/generations';
import type { Hit } from './retrievers';

/**
 * Term proximity: a chunk whose code says several of the question's words together
 * (`validateStatus`, "chunked transfer encoding") is more likely about what the question asks
 * than one holding the same words scattered over unrelated code. Measured on the already-ranked
 * head of the lexical list only, from the chunks' texts.
 */

/**
 * How many words apart the question's words may stand and still count as said together: about a
 * line of code, or one identifier and its neighbours.
 */
export const PROXIMITY_WINDOW = 10;

/** A question word: its forms (the word and its stems) and its weight (its rarity in the index). */
export interface QuestionWord {
  readonly forms: readonly string[];
  readonly weight: number;
}

/** The question's words as a proximity measure reads them. */
export class ProximityQuery {
  private readonly wordOf = new Map<string, number>();
  private readonly weights: readonly number[];
  private readonly total: number;

  constructor(words: readonly QuestionWord[]) {
    const counted = words.filter((word) => word.weight > 0);
    counted.forEach(({ forms }, at) => forms.forEach((form) => this.wordOf.set(form, at)));
    this.weights = counted.map((word) => word.weight);
    this.total = this.weights.reduce((sum, weight) => sum + weight, 0);
  }

  /** Proximity says something only when the question has two or more words the index holds. */
  get measurable(): boolean {
    return this.weights.length >= 2;
  }

  /**
   * The share of the question's weight held by the best window of PROXIMITY_WINDOW words of the
   * text whose word places are `words`: the summed weights of the distinct question words found
   * within it, over the weights of all the question's words. A window holding only one of them
   * counts nothing.
   */
  windowShare(words: WordPlaces): number {
    if (!this.measurable) return 0;
    // only the places of the question's words matter: the window slides over them alone
    const places: { at: number; word: number }[] = [];
    for (const [form, word] of this.wordOf)
      for (const at of words.get(form) ?? []) places.push({ at, word });
    places.sort((a, b) => a.at - b.at);
    const inWindow = new Map<number, number>();
    let best = 0;
    let first = 0;
    for (const place of places) {
      inWindow.set(place.word, (inWindow.get(place.word) ?? 0) + 1);
      while (place.at - places[first]!.at >= PROXIMITY_WINDOW) {
        const leaving = places[first++]!.word;
        const left = inWindow.get(leaving)! - 1;
        if (left) inWindow.set(leaving, left);
        else inWindow.delete(leaving);
      }
      if (inWindow.size < 2) continue;
      let held = 0;
      for (const word of inWindow.keys()) held += this.weights[word]!;
      best = Math.max(best, held);
    }
    return best / this.total;
  }
}

/** Where a text's words stand: each distinct word with its places in the text's word sequence. */
export type WordPlaces = ReadonlyMap<string, readonly number[]>;

/** The word places of `text`, its words split as the index splits them. */
export function wordPlaces(text: string): WordPlaces {
  const places = new Map<string, number[]>();
  camelSnakeTokenize(text).forEach((word, at) => {
    const seen = places.get(word);
    if (seen) seen.push(at);
    else places.set(word, [at]);
  });
  return places;
}

/**
 * Characters of chunk text whose word places one generation keeps: the head of one question reads
 * about 20 chunks of a few thousand characters, so the two generations hold the heads of a few
 * dozen questions.
 */
const CACHED_CHARS = 512 * 1024;

/**
 * The word places of recently measured texts, kept across questions: a chunk's words are the same
 * for every question, and splitting the head's texts into words was nearly all of the proximity
 * stage's time. Keyed by the text itself, so a chunk a save changed is split again and no question
 * measures words the code no longer has, whether or not the cache hears of the change.
 */
export function wordPlacesCache(chars = CACHED_CHARS): Generations<string, WordPlaces> {
  return new Generations(chars, (text) => text.length);
}

/**
 * `hits` (a ranked list) with its first `head` hits reordered: the ones whose text holds more of
 * the question's words within one window first, their own order breaking ties. The rest keep
 * their places. A hit with no text to read counts as holding none together.
 */
export function closeWordsFirst(
  hits: readonly Hit[],
  head: number,
  query: ProximityQuery,
  wordsOf: (chunkId: string) => WordPlaces | undefined,
): Hit[] {
  if (!query.measurable) return [...hits];
  const reordered = hits
    .slice(0, head)
    .map((hit, rank) => {
      const words = wordsOf(hit.chunkId);
      return { hit, rank, share: words ? query.windowShare(words) : 0 };
    })
    .sort((a, b) => b.share - a.share || a.rank - b.rank)
    .map(({ hit }) => hit);
  return [...reordered, ...hits.slice(head)];
}
