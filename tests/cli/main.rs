//! The one integration-test binary: drives the real `ctxj` executable with assert_cmd.
//! Tests are hermetic: every process runs through `common::hermetic` (cleared environment, `PATH`
//! kept, `TZ=UTC`, a temporary `HOME`, no colour). A test whose input is missing (python3,
//! chromium, `../shared/samples`) is ignored with a reason, and fails under `CI=true` (build.rs).

mod agent_profiles;
mod agreement;
mod audit;
mod billed;
mod bundled;
mod bundled_clean;
mod check;
mod codex_pairing;
mod common;
mod conformance;
mod context;
mod experiment;
mod export;
mod first_hour;
mod flags;
#[cfg(feature = "synth")]
mod fleet;
mod formats;
mod foundation;
mod help;
mod hostile;
mod images;
mod import;
mod import_agents;
mod import_opencode;
mod layering;
mod live;
mod memo;
mod model_names;
mod otlp_receiver;
#[cfg(feature = "synth")]
mod perf;
mod phoenix;
mod prefix;
mod report;
mod samples;
mod scale;
mod simulated;
mod strategy;
mod summarizer;
mod tokens;
mod tokens_exact;
mod tune;
mod usage_agents;
mod usage_fast;
mod usage_prices;

/// Without the `synth` feature the tests that drive `ctxj synth` (perf.rs, fleet.rs) cannot be built: say so
/// with a failure instead of letting them vanish.
#[cfg(not(feature = "synth"))]
#[test]
fn the_synth_tests_need_the_synth_feature() {
    panic!("tests/cli/perf.rs drives `ctxj synth`: run the suite as `cargo test --locked --features synth`");
}

/// Every `tests/cli/*.rs` is a module of this file (jj's `test_no_forgotten_test_files`): a test
/// file nobody declared would never be compiled nor run.
#[test]
fn test_no_forgotten_test_files() {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/cli");
    let main = std::fs::read_to_string(dir.join("main.rs")).unwrap();
    let declared: std::collections::BTreeSet<String> =
        main.lines().filter_map(|l| l.trim().strip_prefix("mod ")?.strip_suffix(';').map(str::to_string)).collect();
    let mut forgotten = Vec::new();
    for e in std::fs::read_dir(&dir).unwrap() {
        let name = e.unwrap().file_name().to_string_lossy().into_owned();
        if let Some(m) = name.strip_suffix(".rs").filter(|m| *m != "main") {
            if !declared.contains(m) {
                forgotten.push(name);
            }
        }
    }
    assert!(forgotten.is_empty(), "test files not declared in tests/cli/main.rs: {forgotten:?}");
}
