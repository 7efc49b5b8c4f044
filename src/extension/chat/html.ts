import { randomBytes } from 'node:crypto';
import * as vscode from 'vscode';

/**
 * The chat webview's page. Everything it runs comes from the extension's own files under a strict
 * CSP: scripts need this page's nonce, so nothing injected into the page (an answer, a file) can run.
 * The page itself is an empty shell; `dist/webview/chat.js` builds the interface.
 */
export function chatHtml(webview: vscode.Webview, extensionUri: vscode.Uri): string {
  const nonce = randomBytes(18).toString('base64');
  const asset = (...segments: string[]): string =>
    escapeAttribute(
      webview.asWebviewUri(vscode.Uri.joinPath(extensionUri, ...segments)).toString(),
    );
  const csp = [
    "default-src 'none'",
    `img-src ${webview.cspSource} data:`,
    // 'unsafe-inline' for styles: mermaid's SVGs carry <style> elements and style attributes.
    `style-src ${webview.cspSource} 'unsafe-inline'`,
    `script-src 'nonce-${nonce}'`,
    `font-src ${webview.cspSource}`,
  ].join('; ');
  // Mermaid is ~3 MB: the chat loads it (with this nonce) only when an answer contains a diagram.
  return `<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="UTF-8">
<meta http-equiv="Content-Security-Policy" content="${escapeAttribute(csp)}">
<meta name="viewport" content="width=device-width, initial-scale=1.0">
<link rel="stylesheet" href="${asset('media', 'chat.css')}">
<title>Code Oracle</title>
</head>
<body>
<main id="app"></main>
<script nonce="${nonce}" src="${asset('dist', 'webview', 'chat.js')}" data-mermaid-src="${asset('dist', 'webview', 'mermaid.min.js')}"></script>
</body>
</html>`;
}

function escapeAttribute(value: string): string {
  return value.replace(/&/g, '&amp;').replace(/"/g, '&quot;').replace(/</g, '&lt;');
}
