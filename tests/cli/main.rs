//! The one integration-test binary: drives the real `ctxj` executable with assert_cmd.
//! Tests are hermetic: no colour, no user environment (`CTXJ_ROOT`, `NO_COLOR` cleared).

mod bundled;
mod check;
mod common;
mod conformance;
mod foundation;
mod hostile;
mod import;
mod perf;
mod report;
mod samples;
mod strategy;
mod tokens;
