import * as vscode from 'vscode';
import type { IndexStats } from '../engine/engine';
import type { IndexProgress } from '../engine/index/indexer';
import { INDEX_STAGE_LABELS, indexTotals } from '../engine/model/progress';

/** The status-bar item: what the index is doing, or what it holds. Clicking opens the log. */
export class IndexStatus implements vscode.Disposable {
  private readonly item = vscode.window.createStatusBarItem(
    'codeOracle.status',
    vscode.StatusBarAlignment.Left,
    10,
  );

  constructor() {
    this.item.name = 'Code Oracle index';
    this.item.command = 'codeOracle.showLog';
    this.item.text = '$(search) Code Oracle';
    this.item.show();
  }

  indexing(progress: IndexProgress): void {
    const counts = progress.total > 1 ? ` ${progress.done}/${progress.total}` : '';
    this.item.text = `$(sync~spin) Code Oracle: ${INDEX_STAGE_LABELS[progress.stage]}${counts}`;
    this.item.tooltip = 'Code Oracle is indexing this workspace. Click to show the log.';
  }

  ready(stats: readonly IndexStats[]): void {
    const { files, chunks, facts } = indexTotals(stats);
    this.item.text = `$(database) ${files} files · ${chunks} chunks`;
    const embedding =
      stats.find((entry) => !entry.embedding.available)?.embedding.reason ??
      `Embeddings: ${stats[0]?.embedding.modelId ?? 'none'}`;
    this.item.tooltip = `Code Oracle index: ${files} files, ${chunks} chunks, ${facts} definitions.\n${embedding}\nClick to show the log.`;
  }

  failed(message: string): void {
    this.item.text = '$(warning) Code Oracle';
    this.item.tooltip = `${message}\nClick to show the log.`;
  }

  dispose(): void {
    this.item.dispose();
  }
}
