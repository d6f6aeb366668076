//! Gemini API `Content` (`{role, parts: [...]}`) as Gemini CLI and Qwen Code record it: a
//! message's parts split into text, function calls, function responses and images, and the
//! records they become (shared by [`super::gemini`] and [`super::qwen`]).
//!
//! Part shapes (Gemini API `Part`): `{text}` (with `thought: true` for a thought summary, which
//! is not resent), `{functionCall: {id, name, args}}`, `{functionResponse: {id, name, response}}`,
//! `{inlineData: {mimeType, data}}`, `{fileData: {mimeType, fileUri}}`. A bare string stands for one
//! text part.

use std::sync::Arc;

use serde_json::{Map, Value};

use super::content::Calls;
use super::{Builder, Image, ImportReport};
use crate::journal::{Body, Call, ResultRec, Usage};

/// The pieces of one `Content`'s parts.
#[derive(Default)]
pub(crate) struct Parts {
    pub texts: Vec<String>,
    /// (id, name, args) of each `functionCall`.
    pub calls: Vec<(String, String, Value)>,
    /// (id, name, response) of each `functionResponse`.
    pub responses: Vec<(String, String, Value)>,
    pub images: Vec<Image>,
}

/// Splits `content` (a string, an array of parts or of strings, or one part object) into
/// [`Parts`]; thought parts and unknown parts are counted in `report` as unrepresented.
pub(crate) fn split(content: Option<&Value>, report: &mut ImportReport) -> Parts {
    let mut out = Parts::default();
    match content {
        Some(Value::String(t)) => out.texts.push(t.clone()),
        Some(Value::Array(a)) => a.iter().for_each(|p| part(p, &mut out, report)),
        Some(p @ Value::Object(_)) => part(p, &mut out, report),
        _ => {}
    }
    out
}

fn part(p: &Value, out: &mut Parts, report: &mut ImportReport) {
    let Some(o) = p.as_object() else {
        if let Some(t) = p.as_str() {
            out.texts.push(t.to_string());
        }
        return;
    };
    let str_of = |o: &Map<String, Value>, k: &str| o.get(k).and_then(Value::as_str).unwrap_or("").to_string();
    if o.get("thought").and_then(Value::as_bool) == Some(true) {
        report.lose("thought part");
    } else if let Some(t) = o.get("text").and_then(Value::as_str) {
        out.texts.push(t.to_string());
    } else if let Some(fc) = o.get("functionCall").and_then(Value::as_object) {
        let args = fc.get("args").cloned().unwrap_or(Value::Object(Map::new()));
        out.calls.push((str_of(fc, "id"), str_of(fc, "name"), args));
    } else if let Some(fr) = o.get("functionResponse").and_then(Value::as_object) {
        let resp = fr.get("response").cloned().unwrap_or(Value::Null);
        out.responses.push((str_of(fr, "id"), str_of(fr, "name"), resp));
    } else if let Some(d) = o.get("inlineData").and_then(Value::as_object) {
        out.images.push(Image {
            kind: "image",
            media: d.get("mimeType").and_then(Value::as_str).unwrap_or("image").to_string(),
            data: d.get("data").and_then(Value::as_str).map(Arc::from),
        });
    } else if let Some(d) = o.get("fileData").and_then(Value::as_object) {
        out.texts.push(format!("[file: {}]", str_of(d, "fileUri")));
        report.lose("fileData part (kept as a placeholder line)");
    } else {
        report.lose("other part");
    }
}

/// The text a function response is sent as: its `output` (Gemini CLI's shape), else its `error`,
/// else the response's JSON; and whether it reports an error.
pub(crate) fn response_text(resp: &Value) -> (String, Option<bool>) {
    let get = |k: &str| resp.get(k);
    match (get("output"), get("error")) {
        (Some(Value::String(s)), _) => (s.clone(), None),
        (_, Some(Value::String(e))) => (e.clone(), Some(true)),
        (_, Some(e)) if !e.is_null() => (e.to_string(), Some(true)),
        _ => match resp {
            Value::String(s) => (s.clone(), None),
            Value::Null => (String::new(), None),
            v => (v.to_string(), None),
        },
    }
}

/// The journal calls of a model turn's function calls; a call without an id gets `<prefix>-N`
/// (Gemini API calls need not carry ids) and a repeated id is skipped as `dup`.
pub(crate) fn calls(
    b: &mut Builder,
    reg: &mut Calls,
    prefix: &str,
    fc: Vec<(String, String, Value)>,
    report: &mut ImportReport,
) -> Vec<Call> {
    let mut out = Vec::new();
    for (n, (id, name, args)) in fc.into_iter().enumerate() {
        let id = if id.is_empty() { format!("{prefix}-call{}", n + 1) } else { id };
        out.extend(reg.add(b, &id, &name, args, report, "duplicate functionCall id"));
    }
    out
}

/// The result records of function responses (matched to their calls by id, else by name to the
/// oldest unanswered call of that tool).
pub(crate) fn results(
    reg: &mut Calls,
    pending: &mut Vec<(String, String)>,
    resp: Vec<(String, String, Value)>,
    report: &mut ImportReport,
) -> Vec<Body> {
    let mut out = Vec::new();
    for (id, name, r) in resp {
        let id = if id.is_empty() || !pending.iter().any(|(p, _)| *p == id) {
            match pending.iter().find(|(_, t)| *t == name) {
                Some((p, _)) if id.is_empty() => p.clone(),
                _ => id,
            }
        } else {
            id
        };
        pending.retain(|(p, _)| *p != id);
        let Some(tool) =
            reg.answer(&id, report, "functionResponse without its call", "second functionResponse for one call")
        else {
            continue;
        };
        let (text, is_error) = response_text(&r);
        out.push(Body::Result(ResultRec::whole(id, tool, text, is_error)));
    }
    out
}

/// Gemini API usage (`promptTokenCount` includes the cached tokens; thoughts are billed as output).
pub(crate) fn usage(prompt: u64, cached: u64, output: u64, thoughts: u64) -> Option<Usage> {
    (prompt + output + thoughts > 0).then_some(Usage {
        prompt_tokens: Some(prompt),
        cached_tokens: Some(cached.min(prompt)),
        completion_tokens: Some(output + thoughts),
        cache_write_tokens: None,
        ..Default::default()
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parts_split_by_kind() {
        let mut r = ImportReport::default();
        let v: Value = serde_json::from_str(
            r#"[{"text":"a"},{"text":"t","thought":true},{"functionCall":{"id":"c","name":"ls","args":{"p":1}}},
               {"functionResponse":{"id":"c","name":"ls","response":{"output":"x"}}},{"inlineData":{"mimeType":"image/png","data":"QUJD"}}]"#,
        )
        .unwrap();
        let p = split(Some(&v), &mut r);
        assert_eq!(p.texts, vec!["a"]);
        assert_eq!(p.calls.len(), 1);
        assert_eq!(p.responses.len(), 1);
        assert_eq!(p.images.len(), 1);
        assert_eq!(r.unrepresented["thought part"], 1);
        assert_eq!(response_text(&serde_json::json!({"error": "bad"})), ("bad".to_string(), Some(true)));
        assert_eq!(response_text(&serde_json::json!({"output": "ok"})), ("ok".to_string(), None));
    }
}
