//! Usage.
