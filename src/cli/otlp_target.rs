//! The flags and environment of `ctxj export --endpoint`: where to send and how, as the OTLP
//! exporter specification reads them.
//!
//! `--endpoint URL` (or, with no URL, `OTEL_EXPORTER_OTLP_ENDPOINT`) is a base to which
//! `v1/traces` is appended; `OTEL_EXPORTER_OTLP_TRACES_ENDPOINT` is used as it is. Headers come
//! from `OTEL_EXPORTER_OTLP_HEADERS`, then `OTEL_EXPORTER_OTLP_TRACES_HEADERS`, then `--header`
//! (later ones win); `--protocol` defaults to `OTEL_EXPORTER_OTLP_TRACES_PROTOCOL` /
//! `OTEL_EXPORTER_OTLP_PROTOCOL`, else `http/protobuf`; `--timeout` to
//! `OTEL_EXPORTER_OTLP_TIMEOUT` (milliseconds), else 10 s. gRPC is refused with a hint.

use std::time::Duration;

use anyhow::{anyhow, bail, Result};
use clap::ValueEnum;

use ctxj_core::text::escape_line;

/// The flags of `ctxj export --endpoint`.
#[derive(Debug, Clone, clap::Args)]
pub struct SendArgs {
    /// Send the traces to an OTLP/HTTP receiver instead of writing rows: the base URL
    /// (`http://localhost:4318`; `/v1/traces` is appended). Without a URL:
    /// OTEL_EXPORTER_OTLP_TRACES_ENDPOINT or OTEL_EXPORTER_OTLP_ENDPOINT.
    #[arg(long, value_name = "URL", num_args = 0..=1, default_missing_value = "")]
    pub endpoint: Option<String>,
    /// A header of every request, KEY=VALUE (repeatable; after OTEL_EXPORTER_OTLP_HEADERS).
    #[arg(long = "header", value_name = "KEY=VALUE", requires = "endpoint")]
    pub headers: Vec<String>,
    /// http/protobuf (default; Phoenix, Langfuse, collectors) or http/json.
    #[arg(long, value_enum, requires = "endpoint")]
    pub protocol: Option<Protocol>,
    /// Seconds to wait for each request (default: OTEL_EXPORTER_OTLP_TIMEOUT, else 10).
    #[arg(long, value_name = "SECONDS", requires = "endpoint")]
    pub timeout: Option<u64>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum Protocol {
    #[value(name = "http/protobuf")]
    HttpProtobuf,
    #[value(name = "http/json")]
    HttpJson,
}

/// The environment the sender reads (a function, so tests can hand it one).
pub type Env<'a> = &'a dyn Fn(&str) -> Option<String>;

/// Where and how to send.
#[derive(Debug, Clone, PartialEq)]
pub struct Target {
    pub url: String,
    pub headers: Vec<(String, String)>,
    pub protocol: Protocol,
    pub timeout: Duration,
}

impl SendArgs {
    /// The target, from the flags and `env`.
    pub fn target(&self, env: Env) -> Result<Target> {
        let given = self.endpoint.as_deref().unwrap_or_default();
        let url = if !given.is_empty() {
            signal_url(given)
        } else if let Some(u) = env("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT").filter(|u| !u.is_empty()) {
            u
        } else if let Some(u) = env("OTEL_EXPORTER_OTLP_ENDPOINT").filter(|u| !u.is_empty()) {
            signal_url(&u)
        } else {
            bail!("--endpoint needs a URL (or OTEL_EXPORTER_OTLP_ENDPOINT), e.g. --endpoint http://localhost:4318");
        };
        if !(url.starts_with("http://") || url.starts_with("https://")) {
            bail!("--endpoint {}: OTLP/HTTP needs an http:// or https:// URL", escape_line(&url));
        }
        let mut headers = Vec::new();
        for var in ["OTEL_EXPORTER_OTLP_HEADERS", "OTEL_EXPORTER_OTLP_TRACES_HEADERS"] {
            for kv in env(var).unwrap_or_default().split(',').filter(|kv| !kv.trim().is_empty()) {
                let (k, v) = split_header(kv).ok_or_else(|| anyhow!("{var}: {} is not KEY=VALUE", escape_line(kv)))?;
                set(&mut headers, k, percent_decode(&v));
            }
        }
        for kv in &self.headers {
            let (k, v) = split_header(kv).ok_or_else(|| anyhow!("--header {} is not KEY=VALUE", escape_line(kv)))?;
            set(&mut headers, k, v);
        }
        let protocol = match self.protocol {
            Some(p) => p,
            None => match env("OTEL_EXPORTER_OTLP_TRACES_PROTOCOL")
                .or_else(|| env("OTEL_EXPORTER_OTLP_PROTOCOL"))
                .as_deref()
            {
                None | Some("") | Some("http/protobuf") => Protocol::HttpProtobuf,
                Some("http/json") => Protocol::HttpJson,
                Some(other) => bail!(
                    "OTLP protocol {}: ctxj sends http/protobuf or http/json (gRPC is not supported: use the \
                     receiver's HTTP port, 4318 by default)",
                    escape_line(other)
                ),
            },
        };
        let timeout = match self.timeout {
            Some(s) => Duration::from_secs(s.max(1)),
            None => env("OTEL_EXPORTER_OTLP_TIMEOUT")
                .and_then(|ms| ms.trim().parse::<u64>().ok())
                .map_or(Duration::from_secs(10), |ms| Duration::from_millis(ms.max(1))),
        };
        Ok(Target { url, headers, protocol, timeout })
    }
}

/// `base` + `v1/traces` (one slash between them).
fn signal_url(base: &str) -> String {
    format!("{}/v1/traces", base.trim_end_matches('/'))
}

fn split_header(kv: &str) -> Option<(String, String)> {
    let (k, v) = kv.split_once('=')?;
    let k = k.trim();
    (!k.is_empty() && k.bytes().all(|b| b.is_ascii_graphic() && b != b':'))
        .then(|| (k.to_string(), v.trim().to_string()))
}

/// Replaces the header `k` (case-insensitively) or adds it.
fn set(headers: &mut Vec<(String, String)>, k: String, v: String) {
    headers.retain(|(h, _)| !h.eq_ignore_ascii_case(&k));
    headers.push((k, v));
}

/// The W3C Baggage value decoding the spec asks of `OTEL_EXPORTER_OTLP_HEADERS` (`%20` → ` `).
fn percent_decode(s: &str) -> String {
    let b = s.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        let hex = |c: u8| (c as char).to_digit(16);
        if b[i] == b'%' && i + 2 < b.len() {
            if let (Some(h), Some(l)) = (hex(b[i + 1]), hex(b[i + 2])) {
                out.push((h * 16 + l) as u8);
                i += 3;
                continue;
            }
        }
        out.push(b[i]);
        i += 1;
    }
    String::from_utf8_lossy(&out).into_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn args(endpoint: Option<&str>, headers: &[&str]) -> SendArgs {
        SendArgs {
            endpoint: endpoint.map(str::to_string),
            headers: headers.iter().map(|h| h.to_string()).collect(),
            protocol: None,
            timeout: None,
        }
    }

    #[test]
    fn the_endpoint_and_headers_follow_the_otlp_exporter_spec() {
        let none = |_: &str| None;
        let t = args(Some("http://h:4318/"), &["a=b"]).target(&none).unwrap();
        assert_eq!(t.url, "http://h:4318/v1/traces");
        assert_eq!(t.headers, [("a".to_string(), "b".to_string())]);
        assert_eq!((t.protocol, t.timeout), (Protocol::HttpProtobuf, Duration::from_secs(10)));
        let env = |k: &str| match k {
            "OTEL_EXPORTER_OTLP_ENDPOINT" => Some("https://cloud/api/public/otel".to_string()),
            "OTEL_EXPORTER_OTLP_HEADERS" => Some("Authorization=Basic%20abc, x=1".to_string()),
            "OTEL_EXPORTER_OTLP_TIMEOUT" => Some("2500".to_string()),
            _ => None,
        };
        let t = args(Some(""), &["X=2"]).target(&env).unwrap();
        assert_eq!(t.url, "https://cloud/api/public/otel/v1/traces");
        assert_eq!(t.headers, [("Authorization".into(), "Basic abc".into()), ("X".to_string(), "2".to_string())]);
        assert_eq!(t.timeout, Duration::from_millis(2500));
        // The signal's own variable is used as it is.
        let env = |k: &str| (k == "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT").then(|| "http://h/custom".to_string());
        assert_eq!(args(Some(""), &[]).target(&env).unwrap().url, "http://h/custom");
        assert!(args(Some(""), &[]).target(&none).is_err());
        assert!(args(Some("localhost:4318"), &[]).target(&none).is_err());
        assert!(args(Some("http://h"), &["novalue"]).target(&none).is_err());
        let grpc = |k: &str| (k == "OTEL_EXPORTER_OTLP_PROTOCOL").then(|| "grpc".to_string());
        assert!(args(Some("http://h"), &[]).target(&grpc).unwrap_err().to_string().contains("gRPC"));
    }

    #[test]
    fn header_values_are_percent_decoded() {
        assert_eq!(percent_decode("Basic%20a%3Db%"), "Basic a=b%");
        assert_eq!(percent_decode("%zz%2"), "%zz%2");
    }
}
