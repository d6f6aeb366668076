//! `clear-call`: a `clear` record is the model's `ctx clear` action (journal-v1 §2 `clear`): it
//! follows the `assistant` record holding that `ctx` call, precedes the call's result, and its
//! `request` is the call's arguments as sent. A clear no call asked for, or one that clears by
//! other arguments than the call gave, is a decision nobody took.

use std::collections::HashMap;

use serde_json::Value;

use crate::journal::{Body, ClearRequest, Journal};

use super::Finding;

/// The request's fields that the call's arguments must give alike.
const KEYS: [&str; 4] = ["call_ids", "before", "keep_last", "tool"];

/// Whether a call is `ctx` with `{"action": "clear", …}`.
fn is_clear(tool: &str, args: &Value) -> bool {
    tool == "ctx" && args.get("action").and_then(Value::as_str) == Some("clear")
}

/// Whether `request` is what `args` asked.
fn same(request: &ClearRequest, args: &Value) -> bool {
    let req = serde_json::to_value(request).unwrap_or_default();
    KEYS.iter().all(|k| req.get(k) == args.get(k))
}

/// Every `clear-call` finding of `journal`.
pub fn check(journal: &Journal, out: &mut Vec<Finding>) {
    // `ctx clear` calls made and not yet answered: id → arguments
    let mut open: HashMap<&str, &Value> = HashMap::new();
    for rec in &journal.records {
        match &rec.body {
            Body::Assistant(a) => {
                open.extend(a.calls.iter().filter(|c| is_clear(&c.tool, &c.args)).map(|c| (c.id.as_str(), &*c.args)));
            }
            Body::Result(r) => {
                open.remove(r.call.as_str());
            }
            Body::Clear(c) => {
                let msg = match open.iter().find(|(_, args)| same(&c.request, args)) {
                    Some((&id, _)) => {
                        open.remove(id);
                        continue;
                    }
                    None if open.is_empty() => {
                        "no `ctx` clear call awaits its result here: the model asked for no clear".to_string()
                    }
                    None => {
                        let mut ids: Vec<&str> = open.keys().copied().collect();
                        ids.sort_unstable();
                        format!("the request is not the arguments of the pending `ctx` clear call {}", ids.join(", "))
                    }
                };
                out.push(Finding::new("clear-call", rec.rev, rec.line, msg));
            }
            _ => {}
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn request_matches_the_arguments() {
        let r = ClearRequest { call_ids: Some(vec!["c2".into()]), ..ClearRequest::default() };
        assert!(same(&r, &serde_json::json!({"action": "clear", "call_ids": ["c2"]})));
        assert!(!same(&r, &serde_json::json!({"action": "clear", "call_ids": ["c3"]})));
        assert!(!same(&r, &serde_json::json!({"action": "clear", "call_ids": ["c2"], "tool": "run"})));
        assert!(is_clear("ctx", &serde_json::json!({"action": "clear"})));
        assert!(!is_clear("ctx", &serde_json::json!({"action": "commit"})));
    }
}
