import * as vscode from 'vscode';
import type { CallerTreeNode, SymbolLocation } from '../../engine/resolve/symbols';
import type { Ctx } from '../ctx';
import type { FolderIndex } from '../folder-index';

/**
 * The callers tree: a definition at the root, its callers below it, theirs below them — each
 * level read from the index when it is expanded, so deep trees cost nothing until opened. A node
 * jumps to the line where it makes the call; a caller already on the path is marked recursive.
 */
interface CallerItem {
  readonly folder: FolderIndex;
  readonly symbol: SymbolLocation;
  /** Where this caller calls its parent (none for the root). */
  readonly sites: readonly { path: string; line: number }[];
  /** Ids from the root down to this node, to cut cycles. */
  readonly ancestors: readonly string[];
  readonly hasCallers: boolean;
}

export class CallersTree implements vscode.TreeDataProvider<CallerItem> {
  static readonly id = 'codeOracle.callers';
  private roots: CallerItem[] = [];
  private readonly changeEmitter = new vscode.EventEmitter<CallerItem | undefined>();
  readonly onDidChangeTreeData = this.changeEmitter.event;

  constructor(private readonly ctx: Ctx) {}

  /** Shows the callers of `query` (a name, `Class.method`, or `path:line`). */
  async show(folder: FolderIndex, query: string, label: string): Promise<void> {
    const traced = await this.ctx.client.trace(folder.root, query, 1);
    if (!traced.ok) return void vscode.window.showInformationMessage(`Code Oracle: ${traced.error.message.replace(`"${query}"`, `"${label}"`)}`);
    this.roots = traced.value.map((node) => ({ folder, symbol: node.symbol, sites: [], ancestors: [], hasCallers: node.callers.length > 0 || node.truncated === 'depth' }));
    this.changeEmitter.fire(undefined);
    await vscode.commands.executeCommand(`${CallersTree.id}.focus`);
  }

  getTreeItem(item: CallerItem): vscode.TreeItem {
    const recursive = item.ancestors.includes(item.symbol.id);
    // The root opens expanded: clicking "N callers" should show those callers at once.
    const expandable = item.hasCallers && !recursive;
    const state = !expandable ? vscode.TreeItemCollapsibleState.None : item.ancestors.length ? vscode.TreeItemCollapsibleState.Collapsed : vscode.TreeItemCollapsibleState.Expanded;
    const tree = new vscode.TreeItem(item.symbol.qualifiedName, state);
    const site = item.sites[0];
    tree.description = `${site ? `${site.path}:${site.line}` : `${item.symbol.path}:${item.symbol.startLine}`}${item.sites.length > 1 ? ` (+${item.sites.length - 1} more)` : ''}${recursive ? ' · recursive' : ''}`;
    tree.tooltip = `${item.symbol.signature}\n${item.sites.length ? `calls at ${item.sites.map((entry) => `${entry.path}:${entry.line}`).join(', ')}` : `defined at ${item.symbol.path}:${item.symbol.startLine}`}`;
    tree.iconPath = new vscode.ThemeIcon(item.ancestors.length ? 'call-incoming' : 'symbol-function');
    const target = site ?? { path: item.symbol.path, line: item.symbol.startLine };
    tree.command = { command: 'vscode.open', title: 'Open', arguments: [vscode.Uri.joinPath(item.folder.folder.uri, ...target.path.split('/')), { selection: new vscode.Range(target.line - 1, 0, target.line - 1, 0) }] };
    return tree;
  }

  async getChildren(item?: CallerItem): Promise<CallerItem[]> {
    if (!item) return this.roots;
    const traced = await this.ctx.client.trace(item.folder.root, item.symbol.id, 2);
    if (!traced.ok) return [];
    const node = traced.value.find((candidate) => candidate.symbol.id === item.symbol.id) ?? traced.value[0];
    return (node?.callers ?? []).map((caller: CallerTreeNode) => ({
      folder: item.folder,
      symbol: caller.symbol,
      sites: caller.callSites,
      ancestors: [...item.ancestors, item.symbol.id],
      hasCallers: caller.callers.length > 0 || caller.truncated === 'depth',
    }));
  }

  /** The index changed: expanded levels are read again. */
  refresh(): void {
    this.changeEmitter.fire(undefined);
  }
}
