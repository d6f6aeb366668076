//! Probes what some integration tests (and `ctxj-core`'s unit tests, whose `build` key names this
//! file) need, so that a test whose input is missing is `#[ignore]`d
//! with a reason on a developer machine, and FAILS under `CI=true` (where every input must exist).
//!
//! Emits, each when its input is present or when `CI=true`:
//! * `ctxj_has_samples`: `../shared/samples` (or `$CTXJ_SHARED_SAMPLES`), the real transcripts;
//! * `ctxj_has_corpus`: `../shared/corpus` (or `$CTXJ_SHARED_CORPUS`), more real transcripts of
//!   every agent with ccusage's own output in `corpus/ccusage/`;
//! * `ctxj_has_python`: `python3` on `PATH` (the conformance reference implementation);
//! * `ctxj_has_chromium`: `chromium`/`chromium-browser` on `PATH` or `$CTXJ_BROWSER`;
//! * `ctxj_has_fleet`: the fleet venv (`.venv-fleet/bin/python` with `pyspark` installed, made by
//!   `.ci/run` from `fleet/requirements.txt`) and `java` on `PATH` (tests/cli/fleet.rs);
//! * `ctxj_has_otlp_decoder`: the fleet venv's python with opentelemetry-proto installed (the
//!   OTLP receiver of tests/cli/otlp_receiver.rs);
//! * `ctxj_has_phoenix`: Arize Phoenix in the fleet venv (`.venv-fleet/bin/phoenix`, the real OTLP
//!   receiver of tests/cli/phoenix.rs).
//!
//! Tests carry `#[cfg_attr(not(ctxj_has_samples), ignore = "…")]` and call a helper of
//! `tests/cli/common.rs` that panics with a clear message when the input is missing anyway.

use std::env;
use std::path::{Path, PathBuf};

fn main() {
    println!("cargo::rerun-if-changed=build.rs");
    for var in ["CI", "PATH", "CTXJ_SHARED_SAMPLES", "CTXJ_SHARED_CORPUS", "CTXJ_BROWSER"] {
        println!("cargo::rerun-if-env-changed={var}");
    }
    let ci = env::var("CI").is_ok_and(|v| v == "true" || v == "1");
    // The workspace root: this script also serves `crates/core` (its `build` key points here).
    let manifest = PathBuf::from(env::var_os("CARGO_MANIFEST_DIR").expect("set by cargo"));
    let root = if manifest.ends_with("crates/core") { manifest.join("..").join("..") } else { manifest };

    let shared = env::var_os("CTXJ_SHARED_SAMPLES")
        .map(PathBuf::from)
        .unwrap_or_else(|| root.join("..").join("shared").join("samples"));
    emit("ctxj_has_samples", ci || watch(shared).is_dir());
    let corpus = env::var_os("CTXJ_SHARED_CORPUS")
        .map(PathBuf::from)
        .unwrap_or_else(|| root.join("..").join("shared").join("corpus"));
    emit("ctxj_has_corpus", ci || watch(corpus).is_dir());

    let path_dirs: Vec<PathBuf> = env::var_os("PATH").map(|p| env::split_paths(&p).collect()).unwrap_or_default();
    let on_path = |names: &[&str]| -> Option<PathBuf> {
        path_dirs.iter().flat_map(|d| names.iter().map(move |n| d.join(n))).find(|p| is_executable(p)).map(watch)
    };
    emit("ctxj_has_python", ci || on_path(&["python3"]).is_some());

    let browser = env::var_os("CTXJ_BROWSER").map(PathBuf::from).filter(|p| is_executable(p)).map(watch);
    emit("ctxj_has_chromium", ci || browser.or_else(|| on_path(&["chromium", "chromium-browser"])).is_some());

    let venv = root.join(".venv-fleet");
    let pyspark = std::fs::read_dir(venv.join("lib"))
        .into_iter()
        .flatten()
        .flatten()
        .any(|d| d.path().join("site-packages").join("pyspark").is_dir());
    let python = watch(venv.join("bin").join("python"));
    emit("ctxj_has_fleet", ci || (is_executable(&python) && pyspark && on_path(&["java"]).is_some()));
    let otlp_proto = std::fs::read_dir(venv.join("lib"))
        .into_iter()
        .flatten()
        .flatten()
        .any(|d| d.path().join("site-packages").join("opentelemetry").join("proto").is_dir());
    emit("ctxj_has_otlp_decoder", ci || (is_executable(&python) && otlp_proto));
    let phoenix = venv.join("bin").join("phoenix");
    emit("ctxj_has_phoenix", ci || is_executable(&watch(phoenix)));
}

/// Re-probes when a path that was found changes or goes away. A path that is absent is not
/// watched (cargo would rerun this script, and rebuild the crate, on every build): after
/// installing a missing input, `touch build.rs` (or change `PATH`) to have it probed again.
fn watch(p: PathBuf) -> PathBuf {
    if p.exists() {
        println!("cargo::rerun-if-changed={}", p.display());
    }
    p
}

fn emit(cfg: &str, on: bool) {
    println!("cargo::rustc-check-cfg=cfg({cfg})");
    if on {
        println!("cargo::rustc-cfg={cfg}");
    }
}

fn is_executable(p: &Path) -> bool {
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        p.metadata().is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
    }
    #[cfg(not(unix))]
    {
        p.is_file()
    }
}
