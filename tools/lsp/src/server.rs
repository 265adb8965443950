//! The server's state (open documents and their analyses) and the dispatch
//! of each message to a feature. [`Server::handle`] turns one message into
//! the messages to send back, so the stdio loop and `-lit-test` share it.

use crate::analysis::Analysis;
use crate::document::Document;
use crate::features;
use lsp_server::{ErrorCode, Message, Notification, Request, Response};
use lsp_types as lsp;
use lsp_types::notification::{self as note, Notification as _};
use lsp_types::request::{self as req, Request as _};
use lsp_types::Uri;
use serde::de::DeserializeOwned;
use std::collections::HashMap;

/// One open document with the analysis of its current text.
struct Open {
    doc: Document,
    analysis: Analysis,
}

/// The language server.
#[derive(Default)]
pub struct Server {
    docs: HashMap<String, Open>,
    shutting_down: bool,
    /// An `exit` notification arrived: the loop ends.
    pub exited: bool,
}

/// What the server can do, sent in the `initialize` response.
pub fn capabilities() -> lsp::ServerCapabilities {
    lsp::ServerCapabilities {
        text_document_sync: Some(lsp::TextDocumentSyncCapability::Options(
            lsp::TextDocumentSyncOptions {
                open_close: Some(true),
                change: Some(lsp::TextDocumentSyncKind::INCREMENTAL),
                ..Default::default()
            },
        )),
        hover_provider: Some(lsp::HoverProviderCapability::Simple(true)),
        definition_provider: Some(lsp::OneOf::Left(true)),
        references_provider: Some(lsp::OneOf::Left(true)),
        rename_provider: Some(lsp::OneOf::Right(lsp::RenameOptions {
            prepare_provider: Some(true),
            work_done_progress_options: Default::default(),
        })),
        document_symbol_provider: Some(lsp::OneOf::Left(true)),
        completion_provider: Some(lsp::CompletionOptions {
            trigger_characters: Some(vec!["%".into(), "{".into(), ",".into()]),
            ..Default::default()
        }),
        code_action_provider: Some(lsp::CodeActionProviderCapability::Simple(true)),
        document_formatting_provider: Some(lsp::OneOf::Left(true)),
        ..Default::default()
    }
}

fn params<P: DeserializeOwned>(v: serde_json::Value) -> Result<P, String> {
    serde_json::from_value(v).map_err(|e| format!("invalid parameters: {e}"))
}

impl Server {
    pub fn new() -> Server {
        Server::default()
    }

    /// Handles one message; returns the responses and notifications to send.
    pub fn handle(&mut self, msg: Message) -> Vec<Message> {
        match msg {
            Message::Request(r) => vec![Message::Response(self.request(r))],
            Message::Notification(n) => self.notification(n),
            Message::Response(_) => Vec::new(),
        }
    }

    fn request(&mut self, r: Request) -> Response {
        let id = r.id.clone();
        if self.shutting_down && r.method != req::Shutdown::METHOD {
            return Response::new_err(
                id,
                ErrorCode::InvalidRequest as i32,
                "the server is shutting down".into(),
            );
        }
        match self.answer(r) {
            Ok(v) => Response {
                id,
                result: Some(v),
                error: None,
            },
            Err((code, message)) => Response::new_err(id, code as i32, message),
        }
    }

    fn open(&self, uri: &Uri) -> Result<&Open, (ErrorCode, String)> {
        self.docs.get(uri.as_str()).ok_or((
            ErrorCode::InvalidParams,
            format!("`{}` is not open", uri.as_str()),
        ))
    }

    fn answer(&mut self, r: Request) -> Result<serde_json::Value, (ErrorCode, String)> {
        let bad = |e: String| (ErrorCode::InvalidParams, e);
        let json = |v: serde_json::Value| Ok(v);
        let to = |v: serde_json::Result<serde_json::Value>| {
            v.map_err(|e| (ErrorCode::InternalError, e.to_string()))
        };
        match r.method.as_str() {
            req::Initialize::METHOD => to(serde_json::to_value(lsp::InitializeResult {
                capabilities: capabilities(),
                server_info: Some(lsp::ServerInfo {
                    name: "glow-lsp".into(),
                    version: Some(env!("CARGO_PKG_VERSION").into()),
                }),
            })),
            req::Shutdown::METHOD => {
                self.shutting_down = true;
                json(serde_json::Value::Null)
            }
            req::HoverRequest::METHOD => {
                let p: lsp::HoverParams = params(r.params).map_err(bad)?;
                let tp = p.text_document_position_params;
                let o = self.open(&tp.text_document.uri)?;
                to(serde_json::to_value(features::hover(
                    &o.doc,
                    &o.analysis,
                    tp.position,
                )))
            }
            req::GotoDefinition::METHOD => {
                let p: lsp::GotoDefinitionParams = params(r.params).map_err(bad)?;
                let tp = p.text_document_position_params;
                let o = self.open(&tp.text_document.uri)?;
                let loc =
                    features::definition(&o.doc, &o.analysis, &tp.text_document.uri, tp.position);
                to(serde_json::to_value(loc))
            }
            req::References::METHOD => {
                let p: lsp::ReferenceParams = params(r.params).map_err(bad)?;
                let tp = p.text_document_position;
                let o = self.open(&tp.text_document.uri)?;
                to(serde_json::to_value(features::references(
                    &o.doc,
                    &o.analysis,
                    &tp.text_document.uri,
                    tp.position,
                    p.context.include_declaration,
                )))
            }
            req::PrepareRenameRequest::METHOD => {
                let p: lsp::TextDocumentPositionParams = params(r.params).map_err(bad)?;
                let o = self.open(&p.text_document.uri)?;
                to(serde_json::to_value(features::prepare_rename(
                    &o.doc,
                    &o.analysis,
                    p.position,
                )))
            }
            req::Rename::METHOD => {
                let p: lsp::RenameParams = params(r.params).map_err(bad)?;
                let tp = p.text_document_position;
                let o = self.open(&tp.text_document.uri)?;
                let e = features::rename(
                    &o.doc,
                    &o.analysis,
                    &tp.text_document.uri,
                    tp.position,
                    &p.new_name,
                )
                .map_err(|e| (ErrorCode::InvalidParams, e))?;
                to(serde_json::to_value(e))
            }
            req::DocumentSymbolRequest::METHOD => {
                let p: lsp::DocumentSymbolParams = params(r.params).map_err(bad)?;
                let o = self.open(&p.text_document.uri)?;
                to(serde_json::to_value(features::symbols(&o.doc, &o.analysis)))
            }
            req::Completion::METHOD => {
                let p: lsp::CompletionParams = params(r.params).map_err(bad)?;
                let tp = p.text_document_position;
                let o = self.open(&tp.text_document.uri)?;
                to(serde_json::to_value(features::completion(
                    &o.doc,
                    &o.analysis,
                    tp.position,
                )))
            }
            req::CodeActionRequest::METHOD => {
                let p: lsp::CodeActionParams = params(r.params).map_err(bad)?;
                let o = self.open(&p.text_document.uri)?;
                to(serde_json::to_value(features::code_actions(
                    &o.doc,
                    &o.analysis,
                    &p.text_document.uri,
                    p.range,
                )))
            }
            req::Formatting::METHOD => {
                let p: lsp::DocumentFormattingParams = params(r.params).map_err(bad)?;
                let o = self.open(&p.text_document.uri)?;
                to(serde_json::to_value(features::formatting(
                    &o.doc,
                    &o.analysis,
                )))
            }
            other => Err((
                ErrorCode::MethodNotFound,
                format!("glow-lsp does not handle `{other}`"),
            )),
        }
    }

    fn notification(&mut self, n: Notification) -> Vec<Message> {
        match n.method.as_str() {
            note::DidOpenTextDocument::METHOD => {
                let Ok(p) = params::<lsp::DidOpenTextDocumentParams>(n.params) else {
                    return Vec::new();
                };
                let doc = Document::new(p.text_document.text, p.text_document.version);
                self.update(p.text_document.uri, doc)
            }
            note::DidChangeTextDocument::METHOD => {
                let Ok(p) = params::<lsp::DidChangeTextDocumentParams>(n.params) else {
                    return Vec::new();
                };
                let uri = p.text_document.uri;
                let Some(open) = self.docs.remove(uri.as_str()) else {
                    return Vec::new();
                };
                let mut doc = open.doc;
                doc.apply(p.content_changes, p.text_document.version);
                self.update(uri, doc)
            }
            note::DidCloseTextDocument::METHOD => {
                let Ok(p) = params::<lsp::DidCloseTextDocumentParams>(n.params) else {
                    return Vec::new();
                };
                self.docs.remove(p.text_document.uri.as_str());
                vec![publish(p.text_document.uri, Vec::new(), None)]
            }
            note::Exit::METHOD => {
                self.exited = true;
                Vec::new()
            }
            _ => Vec::new(),
        }
    }

    /// Re-analyzes a document and publishes its diagnostics.
    fn update(&mut self, uri: Uri, doc: Document) -> Vec<Message> {
        let analysis = Analysis::new(&doc.text);
        let diags = features::diagnostics(&doc, &analysis, &uri);
        let version = doc.version;
        self.docs
            .insert(uri.as_str().to_string(), Open { doc, analysis });
        vec![publish(uri, diags, Some(version))]
    }

    /// Whether a clean `shutdown` preceded `exit` (the exit code is 0 then).
    pub fn clean_exit(&self) -> bool {
        self.shutting_down
    }
}

fn publish(uri: Uri, diagnostics: Vec<lsp::Diagnostic>, version: Option<i32>) -> Message {
    Message::Notification(Notification::new(
        note::PublishDiagnostics::METHOD.into(),
        lsp::PublishDiagnosticsParams {
            uri,
            diagnostics,
            version,
        },
    ))
}
