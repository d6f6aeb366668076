//! `ctxj export --endpoint`: sends the OTLP traces to a receiver over OTLP/HTTP (protobuf by
//! default, or JSON) in batches, to the [`Target`] that `otlp_target` resolved. A receiver's
//! 429, 502, 503 and 504 are retried twice (the spec's retryable codes); any other failure ends
//! the export, exit 2, with one escaped line.

use std::time::Duration;

use anyhow::{anyhow, bail, Result};

use super::otlp_target::{Protocol, Target};
use ctxj::render::otlp::{json, proto, Trace, Tracer};
use ctxj_core::export::SessionRows;
use ctxj_core::text::escape_line;

/// Spans per request (the OpenTelemetry SDKs' default batch size).
const BATCH_SPANS: usize = 512;

/// Batches sessions' spans into requests of about [`BATCH_SPANS`] spans and posts them.
pub struct Sender {
    target: Target,
    agent: ureq::Agent,
    tracer: Tracer,
    pending: Vec<Trace>,
    spans: usize,
    /// Requests and spans sent.
    pub requests: usize,
    pub sent: usize,
}

impl Sender {
    pub fn new(target: Target) -> Sender {
        let agent = ureq::Agent::config_builder()
            .timeout_global(Some(target.timeout))
            .http_status_as_error(false)
            .user_agent(concat!("ctxj/", env!("CARGO_PKG_VERSION")))
            .build()
            .into();
        Sender { target, agent, tracer: Tracer::default(), pending: Vec::new(), spans: 0, requests: 0, sent: 0 }
    }

    /// Adds a session's trace; sends a batch when it is full.
    pub fn session(&mut self, s: &SessionRows) -> Result<()> {
        let ready = self.tracer.push(s);
        self.add(ready)
    }

    fn add(&mut self, ready: Vec<Trace>) -> Result<()> {
        for t in ready {
            self.spans += t.spans.len();
            self.pending.push(t);
            if self.spans >= BATCH_SPANS {
                self.flush()?;
            }
        }
        Ok(())
    }

    /// Sends the subagents' traces held back and what is pending.
    pub fn finish(&mut self) -> Result<()> {
        let rest = self.tracer.finish();
        self.add(rest)?;
        self.flush()
    }

    /// Sends what is pending.
    fn flush(&mut self) -> Result<()> {
        if self.pending.is_empty() {
            return Ok(());
        }
        let (body, kind) = match self.target.protocol {
            Protocol::HttpProtobuf => (proto::encode(&self.pending), "application/x-protobuf"),
            Protocol::HttpJson => (serde_json::to_vec(&json::traces_data(&self.pending))?, "application/json"),
        };
        self.post(&body, kind)?;
        self.requests += 1;
        self.sent += std::mem::take(&mut self.spans);
        self.pending.clear();
        Ok(())
    }

    fn post(&self, body: &[u8], kind: &str) -> Result<()> {
        let url = escape_line(&self.target.url);
        for attempt in 0.. {
            let mut req = self.agent.post(&self.target.url).header("Content-Type", kind);
            for (k, v) in &self.target.headers {
                req = req.header(k, v);
            }
            // The error's text only: an `io::Error` in the chain would read as a closed stdout.
            let mut resp =
                req.send(body).map_err(|e| anyhow!("sending traces to {url}: {}", escape_line(&e.to_string())))?;
            let status = resp.status().as_u16();
            if (200..300).contains(&status) {
                return Ok(());
            }
            if matches!(status, 429 | 502 | 503 | 504) && attempt < 2 {
                std::thread::sleep(Duration::from_secs(1 << attempt));
                continue;
            }
            let text = resp.body_mut().with_config().limit(64 * 1024).read_to_string().unwrap_or_default();
            let first = text.lines().find(|l| !l.trim().is_empty()).unwrap_or("").chars().take(300).collect::<String>();
            bail!("the OTLP receiver at {url} answered HTTP {status}: {}", escape_line(&first));
        }
        unreachable!("the loop returns")
    }
}
