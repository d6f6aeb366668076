//! Checks of a journal against the spec's rules: [`validate`] (integrity, mirror rules R1–R6,
//! clear selection, fidelity) and [`audit`] (every cleanup decision judged: trigger, restraint,
//! outcome, savings). [`rules`] is the one table of rule ids, severities and sources.
//!
//! Both take a parsed [`Journal`](crate::journal::Journal) and return typed findings; nothing here
//! prints.

use std::fmt;

pub mod agents;
pub mod audit;
pub mod clear_call;
pub mod context;
pub mod elision;
pub mod profile;
pub mod rules;
pub mod validate;

pub use audit::{audit, audit_as, audit_progress, AuditReport, Decision};
pub use profile::{Harness, Profile};
pub use rules::{rule, Rule, RULES};
pub use validate::validate;

/// How serious a finding is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Severity {
    Error,
    Warning,
    Info,
}

impl Severity {
    pub fn as_str(self) -> &'static str {
        match self {
            Severity::Error => "error",
            Severity::Warning => "warning",
            Severity::Info => "info",
        }
    }
}

impl fmt::Display for Severity {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// One finding: a rule broken (or, for `info`, a fact worth knowing) at a record.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Finding {
    pub severity: Severity,
    /// The rev of the record concerned (0 for the journal as a whole).
    pub rev: u64,
    /// Its physical line (0 when unknown).
    pub line: usize,
    /// The rule id, a key of [`rules::RULES`].
    pub rule: &'static str,
    /// One line, journal text unescaped (renderers escape it).
    pub message: String,
    /// The block concerned, when there is one.
    pub block: Option<String>,
}

impl Finding {
    /// A finding of rule `id`; its severity comes from the rule table.
    pub fn new(id: &'static str, rev: u64, line: usize, message: impl Into<String>) -> Finding {
        Finding { severity: rule(id).severity, rev, line, rule: id, message: message.into(), block: None }
    }

    pub fn with_block(mut self, block: impl Into<String>) -> Finding {
        self.block = Some(block.into());
        self
    }
}

/// Counts of findings by severity.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Counts {
    pub errors: usize,
    pub warnings: usize,
    pub infos: usize,
}

impl Counts {
    pub fn of(findings: &[Finding]) -> Counts {
        let mut c = Counts::default();
        for f in findings {
            match f.severity {
                Severity::Error => c.errors += 1,
                Severity::Warning => c.warnings += 1,
                Severity::Info => c.infos += 1,
            }
        }
        c
    }
}
