//! The one integration-test binary: drives the real `ctxj` executable with assert_cmd.
//! Tests are hermetic: no colour, no user environment (`CTXJ_ROOT`, `NO_COLOR` cleared).

mod check;
mod common;
mod foundation;
mod import;
mod samples;
mod strategy;
