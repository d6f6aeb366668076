//! Terminal styling: ANSI colours that are no-ops when colour is off, and the house table style.

/// ANSI styling that is a no-op when colour is off.
pub struct Paint {
    on: bool,
}

impl Paint {
    pub fn new(on: bool) -> Paint {
        Paint { on }
    }
    fn wrap(&self, code: &str, s: &str) -> String {
        if self.on {
            format!("\x1b[{code}m{s}\x1b[0m")
        } else {
            s.to_string()
        }
    }
    pub fn bold(&self, s: &str) -> String {
        self.wrap("1", s)
    }
    pub fn dim(&self, s: &str) -> String {
        self.wrap("2", s)
    }
    pub fn red(&self, s: &str) -> String {
        self.wrap("31", s)
    }
    pub fn green(&self, s: &str) -> String {
        self.wrap("32", s)
    }
    pub fn yellow(&self, s: &str) -> String {
        self.wrap("33", s)
    }
    pub fn cyan(&self, s: &str) -> String {
        self.wrap("36", s)
    }
}

/// A comfy-table with ctxj's house style.
pub fn table(header: &[&str]) -> comfy_table::Table {
    let mut t = comfy_table::Table::new();
    t.load_preset(comfy_table::presets::UTF8_FULL_CONDENSED);
    t.set_content_arrangement(comfy_table::ContentArrangement::Disabled);
    t.set_header(header.iter().copied());
    t
}
