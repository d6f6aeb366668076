//! Checks of a journal against the spec's rules: `validate` (integrity, mirror rules R1–R6,
//! clear selection, fidelity) and `audit` (every cleanup decision judged).
