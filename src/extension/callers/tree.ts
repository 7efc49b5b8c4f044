import * as vscode from 'vscode';
import type {
  CallerTreeNode,
  PossibleCaller,
  Reference,
  SymbolLocation,
} from '../../engine/resolve/symbols';
import type { Ctx } from '../ctx';
import type { FolderIndex } from '../folder-index';

/**
 * The callers tree: a definition at the root, its callers below it, theirs below them. Each trace
 * reads two levels, so a node's children are already known when it is expanded and only the level
 * below them is read then; deep trees cost nothing until opened. A node jumps to the line where it
 * makes the call; a caller already on the path is marked recursive. Beside the resolved callers, a
 * root shows the places passing it as a value and the possible callers (a call naming it whose
 * receiver could not be resolved, with the reason) in groups of their own.
 */
const LEVELS_PER_TRACE = 2;

interface CallerItem {
  readonly folder: FolderIndex;
  readonly symbol: SymbolLocation;
  /** Where this caller calls its parent (none for the root). */
  readonly sites: readonly { path: string; line: number }[];
  /** Ids from the root down to this node, to cut cycles. */
  readonly ancestors: readonly string[];
  readonly hasCallers: boolean;
  /** This node's callers, when the trace that found it went deep enough to read them. */
  readonly callers: readonly CallerTreeNode[] | null;
  readonly valueReferences: readonly Reference[];
  readonly possible: readonly PossibleCaller[];
}

/** A group under the root ("Possible callers (2)") and the sites it holds. */
interface GroupItem {
  readonly type: 'group';
  readonly folder: FolderIndex;
  readonly label: string;
  readonly sites: readonly SiteItem[];
}

interface SiteItem {
  readonly type: 'site';
  readonly folder: FolderIndex;
  readonly path: string;
  readonly line: number;
  readonly from: SymbolLocation | null;
  readonly reason: string | null;
}

type TreeEntry = CallerItem | GroupItem | SiteItem;

export const POSSIBLE_GROUP = 'Possible callers';
export const VALUE_GROUP = 'Passed as a value';

export class CallersTree implements vscode.TreeDataProvider<TreeEntry>, vscode.Disposable {
  static readonly id = 'codeOracle.callers';
  private roots: CallerItem[] = [];
  /** What the tree shows, to trace again when the index changes. */
  private shown: { folder: FolderIndex; query: string } | null = null;
  private readonly changeEmitter = new vscode.EventEmitter<TreeEntry | undefined>();
  readonly onDidChangeTreeData = this.changeEmitter.event;

  constructor(private readonly ctx: Ctx) {}

  /** Shows the callers of `query` (a name, `Class.method`, or `path:line`). */
  async show(folder: FolderIndex, query: string): Promise<void> {
    const traced = await this.ctx.client.trace(folder.root, query, LEVELS_PER_TRACE);
    if (!traced.ok)
      return void vscode.window.showInformationMessage(`Code Oracle: ${traced.error.message}`);
    this.shown = { folder, query };
    this.roots = traced.value.map((node) => itemOf(folder, node, []));
    this.changeEmitter.fire(undefined);
    await vscode.commands.executeCommand(`${CallersTree.id}.focus`);
  }

  getTreeItem(entry: TreeEntry): vscode.TreeItem {
    if ('type' in entry) return entry.type === 'group' ? groupTreeItem(entry) : siteTreeItem(entry);
    const item = entry;
    const recursive = item.ancestors.includes(item.symbol.id);
    // The root opens expanded: clicking "N callers" should show those callers at once.
    const expandable =
      (item.hasCallers || item.possible.length > 0 || item.valueReferences.length > 0) &&
      !recursive;
    const state = !expandable
      ? vscode.TreeItemCollapsibleState.None
      : item.ancestors.length
        ? vscode.TreeItemCollapsibleState.Collapsed
        : vscode.TreeItemCollapsibleState.Expanded;
    const tree = new vscode.TreeItem(item.symbol.qualifiedName, state);
    const site = item.sites[0];
    tree.description = `${site ? `${site.path}:${site.line}` : `${item.symbol.path}:${item.symbol.startLine}`}${item.sites.length > 1 ? ` (+${item.sites.length - 1} more)` : ''}${recursive ? ' · recursive' : ''}`;
    tree.tooltip = `${item.symbol.signature}\n${item.sites.length ? `calls at ${item.sites.map((entry) => `${entry.path}:${entry.line}`).join(', ')}` : `defined at ${item.symbol.path}:${item.symbol.startLine}`}`;
    tree.iconPath = new vscode.ThemeIcon(
      item.ancestors.length ? 'call-incoming' : 'symbol-function',
    );
    const target = site ?? { path: item.symbol.path, line: item.symbol.startLine };
    tree.command = {
      command: 'vscode.open',
      title: 'Open',
      arguments: [
        vscode.Uri.joinPath(item.folder.folder.uri, ...target.path.split('/')),
        { selection: new vscode.Range(target.line - 1, 0, target.line - 1, 0) },
      ],
    };
    return tree;
  }

  async getChildren(entry?: TreeEntry): Promise<TreeEntry[]> {
    if (!entry) return this.roots;
    if ('type' in entry) return entry.type === 'group' ? [...entry.sites] : [];
    const item = entry;
    let callers = item.callers;
    if (!callers) {
      const traced = await this.ctx.client.trace(
        item.folder.root,
        item.symbol.id,
        LEVELS_PER_TRACE,
      );
      callers =
        (traced.ok &&
          traced.value.find((candidate) => candidate.symbol.id === item.symbol.id)?.callers) ||
        [];
    }
    const children: TreeEntry[] = callers.map((caller) =>
      itemOf(item.folder, caller, [...item.ancestors, item.symbol.id]),
    );
    if (item.valueReferences.length)
      children.push(
        group(
          item.folder,
          VALUE_GROUP,
          item.valueReferences.map((reference) => ({ ...reference, reason: null })),
        ),
      );
    if (item.possible.length) children.push(group(item.folder, POSSIBLE_GROUP, item.possible));
    return children;
  }

  /** The index changed: the tree shown is traced again (nothing, when no tree is shown). */
  async refresh(): Promise<void> {
    const shown = this.shown;
    if (!shown) return;
    const traced = await this.ctx.client.trace(shown.folder.root, shown.query, LEVELS_PER_TRACE);
    if (this.shown !== shown) return;
    this.roots = traced.ok ? traced.value.map((node) => itemOf(shown.folder, node, [])) : [];
    this.changeEmitter.fire(undefined);
  }

  dispose(): void {
    this.changeEmitter.dispose();
  }
}

function itemOf(
  folder: FolderIndex,
  node: CallerTreeNode,
  ancestors: readonly string[],
): CallerItem {
  const known = node.truncated !== 'depth';
  return {
    folder,
    symbol: node.symbol,
    sites: node.callSites,
    ancestors,
    hasCallers: node.callers.length > 0 || !known,
    callers: known ? node.callers : null,
    // Only the root lists its other groups: deeper nodes are about the path to the root.
    valueReferences: ancestors.length ? [] : (node.valueReferences ?? []),
    possible: ancestors.length ? [] : (node.possible ?? []),
  };
}

function group(
  folder: FolderIndex,
  label: string,
  sites: readonly {
    path: string;
    line: number;
    from: SymbolLocation | null;
    reason: string | null;
  }[],
): GroupItem {
  return {
    type: 'group',
    folder,
    label: `${label} (${sites.length})`,
    sites: sites.map((site) => ({ type: 'site', folder, ...site })),
  };
}

function groupTreeItem(item: GroupItem): vscode.TreeItem {
  const tree = new vscode.TreeItem(item.label, vscode.TreeItemCollapsibleState.Collapsed);
  tree.iconPath = new vscode.ThemeIcon(
    item.label.startsWith(POSSIBLE_GROUP) ? 'question' : 'references',
  );
  return tree;
}

function siteTreeItem(item: SiteItem): vscode.TreeItem {
  const tree = new vscode.TreeItem(
    item.from?.qualifiedName ?? item.path,
    vscode.TreeItemCollapsibleState.None,
  );
  tree.description = `${item.path}:${item.line}`;
  tree.tooltip = item.reason ?? `passes it as a value at ${item.path}:${item.line}`;
  tree.command = {
    command: 'vscode.open',
    title: 'Open',
    arguments: [
      vscode.Uri.joinPath(item.folder.folder.uri, ...item.path.split('/')),
      { selection: new vscode.Range(item.line - 1, 0, item.line - 1, 0) },
    ],
  };
  return tree;
}
