//! The one integration-test binary: drives the real `ctxj` executable with assert_cmd.
//! Tests are hermetic: every process runs through `common::hermetic` (cleared environment, `PATH`
//! kept, `TZ=UTC`, a temporary `HOME`, no colour). A test whose input is missing (python3,
//! chromium, `../shared/samples`) is ignored with a reason, and fails under `CI=true` (build.rs).

mod audit;
mod billed;
mod bundled;
mod check;
mod codex_pairing;
mod common;
mod conformance;
mod context;
mod experiment;
mod export;
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
#[cfg(feature = "synth")]
mod perf;
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

/// Without the `synth` feature the tests that drive `ctxj synth` (perf.rs, fleet.rs) cannot be built: say so
/// with a failure instead of letting them vanish.
#[cfg(not(feature = "synth"))]
#[test]
fn the_synth_tests_need_the_synth_feature() {
    panic!("tests/cli/perf.rs drives `ctxj synth`: run the suite as `cargo test --locked --features synth`");
}
