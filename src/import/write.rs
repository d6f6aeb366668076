//! Write.
