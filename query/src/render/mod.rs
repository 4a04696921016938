//! Turning an envelope into what the user reads: compact text (default) or JSON. Both read the
//! same envelope, so the CLI and the MCP server can never disagree.

mod change;
mod cscope;
mod text;

pub use cscope::cscope_lines;
pub use text::{tally, text};

/// Output format.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Format {
    /// Compact text for people and agents.
    #[default]
    Text,
    /// The JSON envelope.
    Json,
}

impl std::str::FromStr for Format {
    type Err = String;
    fn from_str(s: &str) -> Result<Format, String> {
        match s {
            "text" => Ok(Format::Text),
            "json" => Ok(Format::Json),
            _ => Err(format!("format must be text or json, not '{s}'")),
        }
    }
}

/// Renders `env` in `format`.
pub fn render(env: &crate::envelope::Envelope, format: Format) -> String {
    match format {
        Format::Text => text(env),
        Format::Json => serde_json::to_string_pretty(env)
            .unwrap_or_else(|e| format!("{{\"error\": \"cannot encode the answer: {e}\"}}")),
    }
}
