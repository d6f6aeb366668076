//! Prices.
