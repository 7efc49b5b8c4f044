import * as vscode from 'vscode';

/**
 * A diagram too large for the sidebar, in an editor tab. The SVG comes from the chat webview
 * (drawn by Mermaid from a sanitised source, then cleaned by DOMPurify); this page runs no
 * script at all, so even a diagram that slipped through could not act.
 */
export function openDiagramPanel(extensionUri: vscode.Uri, svg: string): void {
  const panel = vscode.window.createWebviewPanel(
    'codeOracle.diagram',
    'Code Oracle: Diagram',
    vscode.ViewColumn.Active,
    { enableScripts: false, localResourceRoots: [vscode.Uri.joinPath(extensionUri, 'media')] },
  );
  const csp = "default-src 'none'; img-src data:; style-src 'unsafe-inline'";
  panel.webview.html = `<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="UTF-8">
<meta http-equiv="Content-Security-Policy" content="${csp}">
<title>Diagram</title>
<style>body { margin: 0; padding: 16px; background: var(--vscode-editor-background); } svg { max-width: none; height: auto; }</style>
</head>
<body>${svg}</body>
</html>`;
}
