/**
 * Counts the tokens of a text piece by piece with byte-pair merging over an encoding's ranks,
 * as js-tiktoken encodes, without building the tokens: a piece that is itself a token counts
 * one; any other is merged pair by pair, the lowest-ranked (leftmost on a tie) first, until no
 * pair is a token, and counts its parts. Byte strings are keyed as Latin-1 text (one character
 * per byte) instead of js-tiktoken's comma-joined numbers, which made counting a search's
 * context most of its cost.
 */
export interface Ranks {
  /** The pre-tokeniser's pattern: tokens never cross the pieces it cuts text into. */
  readonly pat_str: string;
  /** Lines of `! offset token token …`: base64 tokens, ranked from `offset` on. */
  readonly bpe_ranks: string;
}

export class TokenCounter {
  private readonly ranks = new Map<string, number>();
  readonly pieces: RegExp;

  constructor(ranks: Ranks) {
    this.pieces = new RegExp(ranks.pat_str, 'gu');
    for (const line of ranks.bpe_ranks.split('\n')) {
      if (!line) continue;
      const [, offset, ...tokens] = line.split(' ');
      const first = Number.parseInt(offset!, 10);
      tokens.forEach((token, i) =>
        this.ranks.set(Buffer.from(token, 'base64').toString('latin1'), first + i),
      );
    }
  }

  /** The tokens of one piece of text (a match of `pieces`). */
  countPiece(piece: string): number {
    // ASCII text is its own UTF-8 bytes: most code needs no conversion
    const bytes = isAscii(piece) ? piece : Buffer.from(piece, 'utf8').toString('latin1');
    if (bytes.length <= 1 || this.ranks.has(bytes)) return 1;
    // parts[i] is where part i starts; part i ends where part i + 1 starts
    const parts: number[] = [];
    for (let i = 0; i <= bytes.length; i++) parts.push(i);
    while (parts.length > 2) {
      let best = -1;
      let bestRank = Infinity;
      for (let i = 0; i + 2 < parts.length; i++) {
        const rank = this.ranks.get(bytes.slice(parts[i]!, parts[i + 2]!));
        if (rank !== undefined && rank < bestRank) {
          bestRank = rank;
          best = i;
        }
      }
      if (best < 0) break;
      parts.splice(best + 1, 1);
    }
    return parts.length - 1;
  }
}

function isAscii(text: string): boolean {
  for (let i = 0; i < text.length; i++) if (text.charCodeAt(i) > 0x7f) return false;
  return true;
}
