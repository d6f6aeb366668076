//! Many small synthetic Claude Code sessions (`ctxj synth --sessions N`), for the fleet tests
//! and benchmarks of `ctxj export` and the Spark job (`docs/fleet.md`).
//!
//! Session `i` lives in `projects/<project>/<uuid>.jsonl` (seven projects, days spread over
//! March 2026); every tenth also has a subagent file `<uuid>/subagents/agent-<id>.jsonl`. Each
//! session is 2–7 API calls of one model (Sonnet, Opus or Haiku) with Claude Code's line shapes:
//! a user prompt, assistant `tool_use` lines with `usage`, `tool_result` user lines. Prompts grow
//! turn by turn and are read from the cache, except after an idle gap of ten minutes (every
//! fifth session), where the cache is written again. Deterministic from the seed.

use std::fs;
use std::io::{self, Write};
use std::path::Path;

use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use serde_json::json;

use super::SynthError;

const MODELS: [&str; 3] = ["claude-sonnet-4-5-20250929", "claude-opus-4-5-20251101", "claude-haiku-4-5-20251001"];

/// What `fleet` wrote.
#[derive(Debug, Clone, Default, PartialEq, Eq, serde::Serialize)]
pub struct FleetStats {
    pub sessions: usize,
    pub subagents: usize,
    pub calls: u64,
    pub bytes: u64,
}

/// A uuid-shaped id from random bits.
fn uuid(rng: &mut ChaCha8Rng) -> String {
    let (a, b, c, d, e): (u32, u16, u16, u16, u64) = (rng.gen(), rng.gen(), rng.gen(), rng.gen(), rng.gen());
    format!("{a:08x}-{b:04x}-4{:03x}-8{:03x}-{:012x}", c & 0xfff, d & 0xfff, e & 0xffff_ffff_ffff)
}

/// One transcript: `calls` API calls starting at `start` (seconds after 2026-03-01T00:00:00Z).
fn transcript(rng: &mut ChaCha8Rng, sid: &str, calls: usize, start: u64, side: bool, idle: bool) -> (String, u64) {
    let model = MODELS[rng.gen_range(0..MODELS.len())];
    let ts = |s: u64| {
        let (d, r) = (s / 86_400, s % 86_400);
        format!("2026-03-{:02}T{:02}:{:02}:{:02}.{:03}Z", d + 1, r / 3600, (r % 3600) / 60, r % 60, s % 1000)
    };
    let mut out = String::new();
    let mut line = |v: serde_json::Value| {
        out.push_str(&v.to_string());
        out.push('\n');
    };
    let common = json!({"isSidechain": side, "userType": "external", "cwd": "/home/user/fleet", "sessionId": sid, "version": "2.1.39"});
    let with = |mut v: serde_json::Value| {
        for (k, x) in common.as_object().expect("object") {
            v[k] = x.clone();
        }
        v
    };
    let (mut t, mut parent, mut prev_prompt) = (start, serde_json::Value::Null, 0u64);
    let u0 = uuid(rng);
    line(with(json!({"type": "user", "parentUuid": parent, "uuid": u0, "timestamp": ts(t),
        "message": {"role": "user", "content": format!("Task {sid}: make the tests pass.")}})));
    parent = json!(u0);
    for k in 0..calls {
        t += if idle && k == calls / 2 { 600 } else { rng.gen_range(2..20) };
        let prompt = if k == 0 { rng.gen_range(9_000..20_000) } else { prev_prompt + rng.gen_range(100..900) };
        let (read, write) =
            if k == 0 || (idle && k == calls / 2) { (0, prompt - 3) } else { (prev_prompt, prompt - prev_prompt - 3) };
        prev_prompt = prompt;
        let last = k + 1 == calls;
        let call = format!("toolu_{}", &uuid(rng).replace('-', "")[..24]);
        let content = if last {
            json!([{"type": "text", "text": "Done: the tests pass."}])
        } else {
            json!([{"type": "tool_use", "id": call, "name": "Bash", "input": {"command": format!("pytest -q -k case{k}")}}])
        };
        let a = uuid(rng);
        line(with(json!({"type": "assistant", "parentUuid": parent, "uuid": a, "timestamp": ts(t),
            "requestId": format!("req_{}", &uuid(rng).replace('-', "")[..24]),
            "message": {"model": model, "id": format!("msg_{}", &uuid(rng).replace('-', "")[..24]), "type": "message",
                "role": "assistant", "content": content, "stop_reason": if last { "end_turn" } else { "tool_use" },
                "usage": {"input_tokens": 3, "cache_creation_input_tokens": write, "cache_read_input_tokens": read,
                    "output_tokens": rng.gen_range(20..400)}}})));
        parent = json!(a);
        if !last {
            t += 1;
            let r = uuid(rng);
            line(with(json!({"type": "user", "parentUuid": parent, "uuid": r, "timestamp": ts(t),
                "message": {"role": "user", "content": [{"type": "tool_result", "tool_use_id": call,
                    "content": format!("{} passed, {} failed", k + 3, calls - k - 1)}]}})));
            parent = json!(r);
        }
    }
    (out, calls as u64)
}

/// Writes `sessions` sessions under `dir/projects` (`dir` must not exist or be empty).
pub fn fleet(sessions: usize, seed: u64, dir: &Path) -> Result<FleetStats, SynthError> {
    let io = |path: &Path| {
        let path = path.to_path_buf();
        move |err: io::Error| SynthError::Io { path, err }
    };
    if dir.exists() && (!dir.is_dir() || fs::read_dir(dir).map_err(io(dir))?.next().is_some()) {
        return Err(SynthError::NotEmpty(dir.to_path_buf()));
    }
    let mut stats = FleetStats::default();
    for i in 0..sessions {
        let mut rng = ChaCha8Rng::seed_from_u64(seed.wrapping_mul(0x9e37_79b9_7f4a_7c15) ^ i as u64);
        let project = dir.join("projects").join(format!("-home-user-proj{}", i % 7));
        fs::create_dir_all(&project).map_err(io(&project))?;
        let sid = uuid(&mut rng);
        let start = (i as u64 % 28) * 86_400 + rng.gen_range(0..72_000);
        let calls = rng.gen_range(2..8);
        let (text, n) = transcript(&mut rng, &sid, calls, start, false, i % 5 == 4);
        let path = project.join(format!("{sid}.jsonl"));
        write(&path, &text, &mut stats).map_err(io(&path))?;
        stats.calls += n;
        if i % 10 == 9 {
            let sub = project.join(&sid).join("subagents");
            fs::create_dir_all(&sub).map_err(io(&sub))?;
            let (text, n) = transcript(&mut rng, &sid, 2, start + 30, true, false);
            let path = sub.join(format!("agent-a{:06x}.jsonl", rng.gen::<u32>() & 0xff_ffff));
            write(&path, &text, &mut stats).map_err(io(&path))?;
            stats.calls += n;
            stats.subagents += 1;
        }
        stats.sessions += 1;
    }
    Ok(stats)
}

fn write(path: &Path, text: &str, stats: &mut FleetStats) -> io::Result<()> {
    let mut f = fs::File::create_new(path)?;
    f.write_all(text.as_bytes())?;
    stats.bytes += text.len() as u64;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn same_seed_same_tree_and_subagents_every_tenth() {
        let (a, b) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
        let sa = fleet(20, 7, a.path()).unwrap();
        let sb = fleet(20, 7, b.path()).unwrap();
        assert_eq!(sa, sb);
        assert_eq!((sa.sessions, sa.subagents), (20, 2));
        let files = |d: &Path| {
            let mut v: Vec<(String, Vec<u8>)> = walkdir::WalkDir::new(d)
                .into_iter()
                .flatten()
                .filter(|e| e.file_type().is_file())
                .map(|e| (e.path().strip_prefix(d).unwrap().display().to_string(), fs::read(e.path()).unwrap()))
                .collect();
            v.sort();
            v
        };
        assert_eq!(files(a.path()), files(b.path()));
        assert!(matches!(fleet(1, 7, a.path()), Err(SynthError::NotEmpty(_))));
    }
}
