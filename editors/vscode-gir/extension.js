// Starts glow-lsp (docs/lsp.md) for .gir files over stdio. The server path
// comes from the `gir.server.path` setting; an empty path turns it off, so
// the grammar works without the server.
"use strict";

const vscode = require("vscode");
const { LanguageClient, TransportKind } = require("vscode-languageclient/node");

let client;

function activate(context) {
  const config = vscode.workspace.getConfiguration("gir");
  const command = config.get("server.path", "glow-lsp");
  if (!command) {
    return;
  }
  const server = { command, args: config.get("server.args", []), transport: TransportKind.stdio };
  client = new LanguageClient(
    "glow-lsp",
    "glow-lsp",
    { run: server, debug: server },
    { documentSelector: [{ scheme: "file", language: "gir" }, { scheme: "untitled", language: "gir" }] }
  );
  context.subscriptions.push({ dispose: () => client && client.stop() });
  return client.start();
}

function deactivate() {
  return client ? client.stop() : undefined;
}

module.exports = { activate, deactivate };
