/**
 * The evaluation metrics of ../shared/eval/score.mjs, for printing next to results: recall of gold
 * lines within a line budget (spans taken in rank order), hit@k, MRR@k and file-level nDCG@k.
 */
export interface GoldLine {
  readonly path: string;
  readonly line: number;
}

export interface ResultSpan {
  readonly path: string;
  readonly startLine: number;
  readonly endLine: number;
}

export interface Metrics {
  recall: number;
  hit: number;
  mrr: number;
  ndcg: number;
}

export function scoreQuestion(
  gold: readonly GoldLine[],
  spans: readonly ResultSpan[],
  budget = 600,
  k = 10,
): Metrics {
  const inside = (span: ResultSpan, line: GoldLine) =>
    normalize(span.path) === normalize(line.path) &&
    span.startLine <= line.line &&
    line.line <= span.endLine;
  let left = budget;
  const taken: ResultSpan[] = [];
  for (const span of spans) {
    if (left <= 0) break;
    const length = Math.max(0, span.endLine - span.startLine + 1);
    taken.push(length > left ? { ...span, endLine: span.startLine + left - 1 } : span);
    left -= Math.min(length, left);
  }
  const covered = gold.filter((line) => taken.some((span) => inside(span, line))).length;
  const first = spans.slice(0, k).findIndex((span) => gold.some((line) => inside(span, line)));
  const relevant = new Set(gold.map((line) => normalize(line.path)));
  const files: string[] = [];
  for (const span of spans) {
    if (!files.includes(normalize(span.path))) files.push(normalize(span.path));
    if (files.length === k) break;
  }
  const dcg = files.reduce(
    (sum, file, i) => sum + (relevant.has(file) ? 1 / Math.log2(i + 2) : 0),
    0,
  );
  let ideal = 0;
  for (let i = 0; i < Math.min(k, relevant.size); i++) ideal += 1 / Math.log2(i + 2);
  return {
    recall: gold.length ? covered / gold.length : 0,
    hit: first >= 0 ? 1 : 0,
    mrr: first >= 0 ? 1 / (first + 1) : 0,
    ndcg: ideal ? dcg / ideal : 0,
  };
}

export function mean(rows: readonly Metrics[]): Metrics {
  const sum = (key: keyof Metrics) =>
    rows.length ? rows.reduce((total, row) => total + row[key], 0) / rows.length : 0;
  return { recall: sum('recall'), hit: sum('hit'), mrr: sum('mrr'), ndcg: sum('ndcg') };
}

function normalize(path: string): string {
  return path.replace(/\\/g, '/').replace(/^\.\//, '');
}
