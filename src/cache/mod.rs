//! Prompt-cache simulation, prices and cost (spec `strategies.md` §4–§6).
