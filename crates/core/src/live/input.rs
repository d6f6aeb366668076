//! Claude Code's status-line input: the JSON it writes on the command's stdin
//! (`../shared/design/live-and-tune.md` §1.3). Every field is optional, unknown keys are ignored,
//! and a field of an unexpected type reads as absent.
//!
//! Before Claude Code 2.1.132 the `context_window` counts were cumulative session totals, not the
//! current context: [`StatusInput::context`] trusts `current_usage` only from 2.1.132 on (or when
//! the version is not given).

use serde_json::Value;

/// The fields of the input that ctxj uses.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct StatusInput {
    pub session_id: Option<String>,
    pub transcript_path: Option<String>,
    pub model_id: Option<String>,
    pub model_name: Option<String>,
    pub version: Option<String>,
    /// Claude Code's own client-side estimate of the session's cost.
    pub cost_usd: Option<f64>,
    pub window_size: Option<u64>,
    /// `context_window.current_usage`: input + cache writes + cache reads (`None` before the
    /// first call and after `/compact` until the next).
    pub current_usage: Option<u64>,
    /// `prompt_cache.last_miss_cause.causes` joined with `+` (Claude Code 2.1.260+, unconfirmed;
    /// a plain string there is taken as the cause).
    pub last_miss_cause: Option<String>,
}

/// The version from which `context_window` gives the current context.
pub const CURRENT_CONTEXT_SINCE: (u64, u64, u64) = (2, 1, 132);

fn version_triplet(v: &str) -> Option<(u64, u64, u64)> {
    let mut it = v.trim().split(['.', '-', ' ']).map(|p| p.parse::<u64>().ok());
    Some((it.next()??, it.next()??, it.next().flatten().unwrap_or(0)))
}

/// `last_miss_cause`: `{causes: [..]}` joined with `+`, or a string.
fn miss_cause(v: &Value) -> Option<String> {
    let joined = match v {
        Value::String(s) => s.clone(),
        _ => v.get("causes")?.as_array()?.iter().filter_map(Value::as_str).collect::<Vec<_>>().join("+"),
    };
    super::reported::clean(&joined)
}

impl StatusInput {
    /// Reads the input; `Err` only when it is not JSON (an empty input is an empty object).
    pub fn parse(bytes: &[u8]) -> Result<StatusInput, serde_json::Error> {
        if bytes.iter().all(u8::is_ascii_whitespace) {
            return Ok(StatusInput::default());
        }
        let v: Value = serde_json::from_slice(bytes)?;
        let s = |v: &Value| v.as_str().map(str::to_string);
        let at = |path: &[&str]| path.iter().try_fold(&v, |v, k| v.get(k));
        let usage = at(&["context_window", "current_usage"]).filter(|u| u.is_object()).map(|u| {
            ["input_tokens", "cache_creation_input_tokens", "cache_read_input_tokens"]
                .iter()
                .map(|k| u.get(k).and_then(Value::as_u64).unwrap_or(0))
                .fold(0u64, u64::saturating_add)
        });
        Ok(StatusInput {
            session_id: at(&["session_id"]).and_then(s),
            transcript_path: at(&["transcript_path"]).and_then(s),
            model_id: at(&["model", "id"]).and_then(s),
            model_name: at(&["model", "display_name"]).and_then(s),
            version: at(&["version"]).and_then(s),
            cost_usd: at(&["cost", "total_cost_usd"]).and_then(Value::as_f64),
            window_size: at(&["context_window", "context_window_size"]).and_then(Value::as_u64),
            current_usage: usage,
            last_miss_cause: at(&["prompt_cache", "last_miss_cause"]).and_then(miss_cause),
        })
    }

    /// The current context from the input, when this version reports it as such.
    pub fn context(&self) -> Option<u64> {
        let recent = self.version.as_deref().and_then(version_triplet).is_none_or(|v| v >= CURRENT_CONTEXT_SINCE);
        self.current_usage.filter(|_| recent)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_field_is_optional_and_old_versions_are_not_trusted_for_context() {
        assert_eq!(StatusInput::parse(b"  \n").unwrap(), StatusInput::default());
        assert_eq!(StatusInput::parse(b"{\"model\":7,\"extra\":{}}").unwrap(), StatusInput::default());
        assert!(StatusInput::parse(b"{not json").is_err());
        let j = br#"{"version":"2.1.140","model":{"id":"claude-opus-4-5","display_name":"Opus"},
            "context_window":{"context_window_size":200000,"current_usage":{"input_tokens":5,"cache_creation_input_tokens":10,"cache_read_input_tokens":100,"output_tokens":9}}}"#;
        let i = StatusInput::parse(j).unwrap();
        assert_eq!((i.context(), i.window_size, i.model_name.as_deref()), (Some(115), Some(200_000), Some("Opus")));
        let old = StatusInput { version: Some("2.0.70".into()), ..i.clone() };
        assert_eq!(old.context(), None, "cumulative before 2.1.132");
        let null = StatusInput::parse(br#"{"context_window":{"current_usage":null}}"#).unwrap();
        assert_eq!(null.context(), None);
        let pc = br#"{"prompt_cache":{"warm":false,"last_miss_cause":{"causes":["tools_changed","model_changed"],"tools_added":1}}}"#;
        assert_eq!(StatusInput::parse(pc).unwrap().last_miss_cause.as_deref(), Some("tools_changed+model_changed"));
        let odd = br#"{"prompt_cache":{"last_miss_cause":{"causes":[]}}}"#;
        assert_eq!(StatusInput::parse(odd).unwrap().last_miss_cause, None);
        let odd = br#"{"prompt_cache":{"last_miss_cause":5}}"#;
        assert_eq!(StatusInput::parse(odd).unwrap().last_miss_cause, None);
    }
}
