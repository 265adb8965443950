//! The protocol's requests over one document and its analysis.

use crate::analysis::{Analysis, Chunk, FuncIndex, Occurrence};
use crate::document::Document;
use crate::hover::{default_text, member_hover, opcode_hover, spelled, value_hover};
use glow_ir::diag::Severity;
use glow_ir::parser::unquote_name;
use glow_ir::printer::{print_function, PrintOptions};
use glow_ir::{Opcode, Span};
use lsp_types as lsp;
use lsp_types::{
    CodeAction, CodeActionKind, CodeActionOrCommand, CompletionItem, CompletionItemKind,
    DocumentSymbol, Hover, HoverContents, Location, MarkupContent, MarkupKind, Position, Range,
    SymbolKind, TextEdit, Uri, WorkspaceEdit,
};
use std::collections::HashMap;

/// The LSP form of the parser's and verifier's diagnostics: glow-opt's
/// message, its notes as `note:` lines, the secondary labels as related
/// information.
pub fn diagnostics(doc: &Document, an: &Analysis, uri: &Uri) -> Vec<lsp::Diagnostic> {
    an.chunks
        .iter()
        .flat_map(|c| c.diags.iter().map(move |d| (c, d)))
        .map(|(c, d)| to_lsp(doc, c, d, uri))
        .collect()
}

fn to_lsp(doc: &Document, c: &Chunk, d: &glow_ir::Diagnostic, uri: &Uri) -> lsp::Diagnostic {
    let range = match &d.primary {
        Some(l) => doc.range(l.span),
        None => doc.range(Span::new(c.range.start, c.range.start)),
    };
    let mut message = d.message.clone();
    for n in &d.notes {
        message.push_str(&format!("\nnote: {n}"));
    }
    let related: Vec<lsp::DiagnosticRelatedInformation> = d
        .secondary
        .iter()
        .map(|l| lsp::DiagnosticRelatedInformation {
            location: Location::new(uri.clone(), doc.range(l.span)),
            message: l.message.clone(),
        })
        .collect();
    lsp::Diagnostic {
        range,
        severity: Some(match d.severity {
            Severity::Error => lsp::DiagnosticSeverity::ERROR,
            Severity::Warning => lsp::DiagnosticSeverity::WARNING,
            Severity::Note => lsp::DiagnosticSeverity::INFORMATION,
        }),
        source: Some("glow".into()),
        message,
        related_information: (!related.is_empty()).then_some(related),
        ..lsp::Diagnostic::default()
    }
}

/// The chunk, function index and function at `pos`.
struct At<'a> {
    chunk: &'a Chunk,
    k: usize,
    func: &'a FuncIndex,
    offset: usize,
}

fn at<'a>(doc: &Document, an: &'a Analysis, pos: Position) -> Option<At<'a>> {
    let offset = doc.offset(pos);
    let chunk = an.chunk_at(offset)?;
    let (k, func) = chunk.func_at(offset)?;
    Some(At {
        chunk,
        k,
        func,
        offset,
    })
}

fn markdown(value: String, range: Option<Range>) -> Hover {
    Hover {
        contents: HoverContents::Markup(MarkupContent {
            kind: MarkupKind::Markdown,
            value,
        }),
        range,
    }
}

pub fn hover(doc: &Document, an: &Analysis, pos: Position) -> Option<Hover> {
    let a = at(doc, an, pos)?;
    if let Some(o) = a.func.occurrence_at(a.offset) {
        let range = Some(doc.range(o.span));
        if let Some(f) = a.chunk.function(a.k) {
            if let Some(v) = f.lookup(&o.key) {
                let mut text = value_hover(f, v, a.chunk.verified);
                if !a.chunk.verified && a.chunk.module.is_some() {
                    text.push_str("\n(the function does not verify: no arena plan)\n");
                }
                if a.chunk.verified {
                    text.push_str(&sharing_hover(f, a.offset));
                }
                return Some(markdown(text, range));
            }
        }
        let text = match a.func.definition(&o.key) {
            Some(d) => format!(
                "**{}**: declared on line {} (the file does not parse, so no type or live range)",
                spelled(&o.key),
                doc.position(d.span.start as usize).line + 1
            ),
            None => format!("**{}**: not declared in this function", spelled(&o.key)),
        };
        return Some(markdown(text, range));
    }
    let (_, line) = a.func.inst_at(a.offset)?;
    let (ospan, oname) = line.opcode.as_ref()?;
    let opcode = Opcode::from_name(oname);
    if contains(*ospan, a.offset) {
        return Some(markdown(opcode_hover(opcode?), Some(doc.range(*ospan))));
    }
    let (mspan, mname) = line.members.iter().find(|(s, _)| contains(*s, a.offset))?;
    Some(markdown(
        member_hover(opcode?, mname)?,
        Some(doc.range(*mspan)),
    ))
}

/// For an operand at `offset` that the opcode pairs in place with another,
/// `--explain-sharing` of the two: why they share memory or do not.
fn sharing_hover(f: &glow_ir::Function, offset: usize) -> String {
    let mut out = String::new();
    for i in f.inst_ids() {
        let Some(spans) = f.spans.inst(i.index()) else {
            continue;
        };
        if !contains(spans.line, offset) {
            continue;
        }
        let Some(k) = spans.operands.iter().position(|s| contains(*s, offset)) else {
            continue;
        };
        let inst = f.inst(i);
        for &(d, s) in inst.opcode.info().inplace {
            let other = match k {
                _ if k == d => s,
                _ if k == s => d,
                _ => continue,
            };
            let (Some(x), Some(y)) = (inst.operands.get(k), inst.operands.get(other)) else {
                continue;
            };
            out.push_str(&format!(
                "\nsharing with {} (`{}` pairs them in place):\n\n```\n{}```\n",
                spelled(f.value_name(y.value)),
                inst.opcode.name(),
                glow_passes::explain::explain_sharing(f, x.value, y.value)
            ));
        }
    }
    out
}

fn contains(s: Span, offset: usize) -> bool {
    (s.start as usize..=s.end as usize).contains(&offset)
}

fn occurrence<'a>(
    doc: &Document,
    an: &'a Analysis,
    pos: Position,
) -> Option<(&'a FuncIndex, &'a Occurrence)> {
    let a = at(doc, an, pos)?;
    Some((a.func, a.func.occurrence_at(a.offset)?))
}

pub fn definition(doc: &Document, an: &Analysis, uri: &Uri, pos: Position) -> Option<Location> {
    let (f, o) = occurrence(doc, an, pos)?;
    let d = f.definition(&o.key)?;
    Some(Location::new(uri.clone(), doc.range(d.span)))
}

pub fn references(
    doc: &Document,
    an: &Analysis,
    uri: &Uri,
    pos: Position,
    include_declaration: bool,
) -> Vec<Location> {
    let Some((f, o)) = occurrence(doc, an, pos) else {
        return Vec::new();
    };
    f.occurrences(&o.key)
        .filter(|r| include_declaration || !r.def)
        .map(|r| Location::new(uri.clone(), doc.range(r.span)))
        .collect()
}

pub fn prepare_rename(doc: &Document, an: &Analysis, pos: Position) -> Option<Range> {
    let (_, o) = occurrence(doc, an, pos)?;
    Some(doc.range(o.span))
}

/// Renames the value at `pos` in every use and its declaration; the new
/// name is written `%name` or `%"quoted"` as the printer would.
pub fn rename(
    doc: &Document,
    an: &Analysis,
    uri: &Uri,
    pos: Position,
    new_name: &str,
) -> Result<WorkspaceEdit, String> {
    let (f, o) = occurrence(doc, an, pos).ok_or("no value name here")?;
    let written = new_name.trim();
    let key = if written.starts_with('%') || written.starts_with('"') {
        unquote_name(written.trim_start_matches('%'))
    } else {
        written.to_string()
    };
    if key.is_empty() {
        return Err("a value name cannot be empty".into());
    }
    if key != o.key && f.definition(&key).is_some() {
        return Err(format!(
            "`{}` is already defined in function `{}`",
            spelled(&key),
            f.name
        ));
    }
    let text = spelled(&key);
    let edits: Vec<TextEdit> = f
        .occurrences(&o.key)
        .map(|r| TextEdit::new(doc.range(r.span), text.clone()))
        .collect();
    Ok(edit(uri, edits))
}

fn edit(uri: &Uri, edits: Vec<TextEdit>) -> WorkspaceEdit {
    WorkspaceEdit {
        changes: Some(HashMap::from([(uri.clone(), edits)])),
        ..WorkspaceEdit::default()
    }
}

#[allow(deprecated)] // `DocumentSymbol::deprecated` must be written to build one.
fn symbol(
    name: String,
    detail: Option<String>,
    kind: SymbolKind,
    range: Range,
    selection_range: Range,
    children: Option<Vec<DocumentSymbol>>,
) -> DocumentSymbol {
    DocumentSymbol {
        name,
        detail,
        kind,
        tags: None,
        deprecated: None,
        range,
        selection_range,
        children,
    }
}

/// Functions, with their weights and their instructions by number.
pub fn symbols(doc: &Document, an: &Analysis) -> Vec<DocumentSymbol> {
    let mut out = Vec::new();
    for c in &an.chunks {
        for f in &c.funcs {
            let mut children = Vec::new();
            for w in &f.weights {
                let line = &doc.text[w.line.range()];
                let detail = line
                    .split_once('=')
                    .map(|(_, r)| r.split('{').next().unwrap_or(r).trim().to_string());
                children.push(symbol(
                    doc.text[w.name.range()].to_string(),
                    detail,
                    SymbolKind::VARIABLE,
                    doc.range(w.line),
                    doc.range(w.name),
                    None,
                ));
            }
            for (p, l) in f.insts.iter().enumerate() {
                children.push(symbol(
                    format!("{p} {}", &doc.text[l.name.range()]),
                    l.opcode.as_ref().map(|o| o.1.clone()),
                    SymbolKind::OPERATOR,
                    doc.range(l.line),
                    doc.range(l.name),
                    None,
                ));
            }
            let sel = if f.name_span == Span::default() {
                f.span
            } else {
                f.name_span
            };
            out.push(symbol(
                f.name.clone(),
                Some(format!(
                    "{} weights, {} instructions",
                    f.weights.len(),
                    f.insts.len()
                )),
                SymbolKind::FUNCTION,
                doc.range(f.span),
                doc.range(sel),
                Some(children),
            ));
        }
    }
    out
}

/// Opcodes after `%x =`, member names (with their defaults) inside an
/// instruction's braces, declared values after `%`.
pub fn completion(doc: &Document, an: &Analysis, pos: Position) -> Vec<CompletionItem> {
    let offset = doc.offset(pos);
    let line_start = doc.offset(Position::new(pos.line, 0));
    let before = &doc.text[line_start..offset];
    let word_start = before
        .rfind(|c: char| !(c.is_ascii_alphanumeric() || "_.$-%\"".contains(c)))
        .map_or(0, |i| i + 1);
    let word = &before[word_start..];
    let replace = Range::new(doc.position(line_start + word_start), pos);
    let item = |label: String, kind, detail: Option<String>, insert: String| CompletionItem {
        label,
        kind: Some(kind),
        detail,
        text_edit: Some(lsp::CompletionTextEdit::Edit(TextEdit::new(
            replace, insert,
        ))),
        ..CompletionItem::default()
    };
    let func = an
        .chunk_at(offset)
        .and_then(|c| c.func_at(offset))
        .map(|(_, f)| f);
    if word.starts_with('%') {
        let Some(f) = func else { return Vec::new() };
        let weights: Vec<Span> = f.weights.iter().map(|w| w.name).collect();
        let mut seen = std::collections::BTreeSet::new();
        return f
            .names
            .iter()
            .filter(|o| o.def && seen.insert(o.key.clone()))
            .map(|o| {
                let detail = if weights.contains(&o.span) {
                    "weight".to_string()
                } else {
                    f.insts
                        .iter()
                        .find(|l| l.name == o.span)
                        .and_then(|l| l.opcode.as_ref())
                        .map_or("instruction".to_string(), |op| op.1.clone())
                };
                let s = spelled(&o.key);
                item(s.clone(), CompletionItemKind::VARIABLE, Some(detail), s)
            })
            .collect();
    }
    let Some((head, rest)) = before.split_once('=') else {
        return Vec::new();
    };
    let head = head.trim();
    let is_decl = head.starts_with('%')
        || head
            .split_once(char::is_whitespace)
            .is_some_and(|(n, r)| n.parse::<u64>().is_ok() && r.trim().starts_with('%'));
    if !is_decl {
        return Vec::new();
    }
    let rest_words: Vec<&str> = rest.split_whitespace().collect();
    let opens = rest.matches('{').count();
    let closes = rest.matches('}').count();
    if opens > closes {
        // Inside the member braces: the opcode is the word after `=`.
        let Some(op) = rest_words.first().and_then(|w| Opcode::from_name(w)) else {
            return Vec::new();
        };
        let inner = &rest[rest.rfind('{').map_or(0, |i| i + 1)..];
        let after_sep = inner
            .trim_end_matches(|c: char| c.is_ascii_alphanumeric() || c == '_')
            .trim_end();
        if !(after_sep.is_empty() || after_sep.ends_with(',')) {
            return Vec::new();
        }
        let written: Vec<&str> = inner
            .split(',')
            .filter_map(|m| m.split_once(':').map(|(n, _)| n.trim()))
            .collect();
        return op
            .info()
            .members
            .iter()
            .filter(|d| !written.contains(&d.name))
            .map(|d| {
                let (detail, value) = match default_text(d) {
                    Some(t) => (format!("{}, default {t}", d.ty.describe()), t),
                    None => (format!("{}, required", d.ty.describe()), String::new()),
                };
                item(
                    d.name.to_string(),
                    CompletionItemKind::FIELD,
                    Some(detail),
                    format!("{}: {value}", d.name),
                )
            })
            .collect();
    }
    if rest_words.len() > 1 || (rest_words.len() == 1 && rest.ends_with(char::is_whitespace)) {
        return Vec::new();
    }
    Opcode::ALL
        .iter()
        .map(|o| {
            let info = o.info();
            let ops: Vec<String> = info
                .operands
                .iter()
                .map(|d| format!("{} {}", d.kind.as_str(), d.name))
                .collect();
            item(
                info.name.to_string(),
                CompletionItemKind::OPERATOR,
                Some(ops.join(", ")),
                info.name.to_string(),
            )
        })
        .collect()
}

/// The printer's text of every function that parses and holds no comment
/// (the printer writes none, so such a function is left as written).
pub fn formatting(doc: &Document, an: &Analysis) -> Vec<TextEdit> {
    let mut edits = Vec::new();
    for c in &an.chunks {
        for (k, fi) in c.funcs.iter().enumerate() {
            let Some(f) = c.function(k).filter(|_| !fi.has_comment) else {
                continue;
            };
            let printed = print_function(f, PrintOptions::default());
            let printed = printed.strip_suffix('\n').unwrap_or(&printed);
            if &doc.text[fi.span.range()] != printed {
                edits.push(TextEdit::new(doc.range(fi.span), printed.to_string()));
            }
        }
    }
    edits
}

/// `X` of a `did you mean `X`?` note.
fn suggestion(note: &str) -> Option<&str> {
    note.strip_prefix("did you mean `")?.strip_suffix("`?")
}

fn overlaps(a: Range, b: Range) -> bool {
    a.start <= b.end && b.start <= a.end
}

/// Quick fixes for the did-you-mean suggestions in `range`, "renumber
/// instructions" and "insert CHECK lines" for the function at `range`.
pub fn code_actions(
    doc: &Document,
    an: &Analysis,
    uri: &Uri,
    range: Range,
) -> Vec<CodeActionOrCommand> {
    let mut out = Vec::new();
    for c in &an.chunks {
        for d in &c.diags {
            let Some(p) = &d.primary else { continue };
            let r = doc.range(p.span);
            if !overlaps(r, range) {
                continue;
            }
            for s in d.notes.iter().filter_map(|n| suggestion(n)) {
                out.push(CodeActionOrCommand::CodeAction(CodeAction {
                    title: format!("Replace `{}` with `{s}`", &doc.text[p.span.range()]),
                    kind: Some(CodeActionKind::QUICKFIX),
                    diagnostics: Some(vec![to_lsp(doc, c, d, uri)]),
                    edit: Some(edit(uri, vec![TextEdit::new(r, s.to_string())])),
                    is_preferred: Some(true),
                    ..CodeAction::default()
                }));
            }
        }
    }
    let Some(a) = at(doc, an, range.start) else {
        return out;
    };
    let renumber: Vec<TextEdit> = a
        .func
        .insts
        .iter()
        .enumerate()
        .filter_map(|(p, l)| match l.index {
            Some(s) if doc.text[s.range()] == p.to_string() => None,
            Some(s) => Some(TextEdit::new(doc.range(s), p.to_string())),
            None => {
                let at = doc.position(l.name.start as usize);
                Some(TextEdit::new(Range::new(at, at), format!("{p} ")))
            }
        })
        .collect();
    if !renumber.is_empty() {
        out.push(CodeActionOrCommand::CodeAction(CodeAction {
            title: format!("Renumber the instructions of `{}`", a.func.name),
            kind: Some(CodeActionKind::REFACTOR_REWRITE),
            edit: Some(edit(uri, renumber)),
            ..CodeAction::default()
        }));
    }
    if let Some(f) = a.chunk.function(a.k) {
        let printed = print_function(f, PrintOptions::default());
        let checks = glow_lit::update_checks::checks_for(&printed, "CHECK", "//");
        let end_line = doc.position(a.func.span.end as usize).line;
        let next_line = Position::new(end_line + 1, 0);
        let mut text = checks.join("\n");
        text.push('\n');
        // The function's last line may end the file without a newline.
        if doc.offset(next_line) == doc.text.len() && !doc.text.ends_with('\n') {
            text.insert(0, '\n');
        }
        out.push(CodeActionOrCommand::CodeAction(CodeAction {
            title: format!("Insert CHECK lines for function `{}`", a.func.name),
            kind: Some(CodeActionKind::new("source.insertChecks")),
            edit: Some(edit(
                uri,
                vec![TextEdit::new(Range::new(next_line, next_line), text)],
            )),
            ..CodeAction::default()
        }));
    }
    out
}
