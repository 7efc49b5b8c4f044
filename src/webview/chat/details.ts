import type { ChatAnswer } from '../../extension/chat/protocol';
import { h } from './dom';

/** The folded "Details" under an answer: how it was retrieved and written, for the curious. */

const MODE_NAMES = { fast: 'Fast', thinking: 'Thinking', deep: 'Deep' } as const;

export function detailsSection(answer: ChatAnswer): HTMLDetailsElement {
  const details = answer.details;
  const rows: [string, Node | string][] = [
    ['Mode', MODE_NAMES[details.mode]],
    ['Model', details.model ?? 'none (evidence only)'],
    ['Question kind', details.questionKind ?? '—'],
    [
      'CRAG',
      details.crag
        ? `${details.crag.decision} · score ${details.crag.score.toFixed(2)} · ${details.crag.strategy}`
        : '—',
    ],
    ['Passes', details.passes === null ? '—' : String(details.passes)],
    ['Gaps identified', list(details.gapsIdentified)],
    ['Gaps resolved', list(details.gapsResolved)],
    ['Gaps unresolved', list(details.gapsUnresolved)],
    ['Agent steps', list(details.agentSteps, 'ol')],
    ['Citations dropped', String(details.citationsDropped)],
    ['Confidence', `${Math.round(answer.confidence * 100)}%`],
    ['Timings', timings(details.timings)],
    ['Duration', seconds(details.durationMs)],
  ];
  const grid = h('dl', {});
  for (const [term, value] of rows) grid.append(h('dt', {}, term), h('dd', {}, value));
  return h(
    'details',
    { class: 'answer-details', 'data-testid': 'details' },
    h('summary', {}, `Details · ${MODE_NAMES[details.mode]} · ${seconds(details.durationMs)}`),
    grid,
  );
}

function list(items: readonly string[], tag: 'ul' | 'ol' = 'ul'): Node | string {
  if (items.length === 0) return 'none';
  return h(tag, {}, ...items.map((item) => h('li', {}, item)));
}

function timings(entries: Record<string, number>): string {
  const parts = Object.entries(entries).map(([name, ms]) => `${name} ${Math.round(ms)} ms`);
  return parts.join(' · ') || '—';
}

function seconds(ms: number): string {
  return `${(ms / 1000).toFixed(ms < 10_000 ? 2 : 1)} s`;
}
