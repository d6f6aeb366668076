//! How a command that prints rows prints them (`--json`, `--format`, `--ascii`: [`RowsArgs`]) and
//! the direction of a listing's sort (`--order`: [`OrderArg`]).

/// `--format` values.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum FormatArg {
    Table,
    Json,
    Ndjson,
    Csv,
}

/// How a command that prints rows prints them: a table fitted to the terminal, or
/// machine-readable rows (docs/json.md).
#[derive(Debug, Clone, Default, clap::Args)]
pub struct RowsArgs {
    /// Same as --format json.
    #[arg(long, conflicts_with = "format")]
    pub json: bool,
    /// table (fitted to the terminal), json (one document), ndjson (one row a line) or csv.
    #[arg(long, value_enum, value_name = "FORMAT")]
    pub format: Option<FormatArg>,
    /// Plain ASCII table borders.
    #[arg(long)]
    pub ascii: bool,
}

impl RowsArgs {
    pub fn format(&self) -> ctxj::render::rows::OutputFormat {
        use ctxj::render::rows::OutputFormat as F;
        match (self.json, self.format) {
            (true, _) | (_, Some(FormatArg::Json)) => F::Json,
            (_, Some(FormatArg::Ndjson)) => F::Ndjson,
            (_, Some(FormatArg::Csv)) => F::Csv,
            _ => F::Table,
        }
    }

    /// Whether the output is machine-readable (JSON, NDJSON, CSV) rather than a table.
    pub fn machine(&self) -> bool {
        self.format() != ctxj::render::rows::OutputFormat::Table
    }

    /// The table layout: `COLUMNS`, else the width of the terminal stdout is, else no limit.
    pub fn layout(&self) -> ctxj::render::fit::Layout {
        let width = std::env::var("COLUMNS")
            .ok()
            .and_then(|c| c.trim().parse::<usize>().ok())
            .filter(|&w| w > 0)
            .or_else(|| terminal_size::terminal_size().map(|(w, _)| w.0 as usize));
        ctxj::render::fit::Layout { width, ascii: self.ascii }
    }
}

/// `--order asc|desc`: the direction of a listing's sort.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum OrderArg {
    Asc,
    Desc,
}

impl OrderArg {
    pub fn order(self) -> ctxj_core::usage::report::Order {
        match self {
            OrderArg::Asc => ctxj_core::usage::report::Order::Asc,
            OrderArg::Desc => ctxj_core::usage::report::Order::Desc,
        }
    }
}
