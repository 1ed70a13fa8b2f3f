//! Log setup: pretty lines in development, JSON in production, both on stderr (stdout carries
//! only the one line that says where the server listens); `RUST_LOG` overrides the level. With
//! `telemetry.otlp_endpoint` set, spans are also exported as OpenTelemetry traces ([`traces`]).

use std::fmt;
use std::io::IsTerminal;

use tracing_subscriber::layer::SubscriberExt;
use tracing_subscriber::util::SubscriberInitExt;
use tracing_subscriber::{EnvFilter, Layer};

use crate::config::{LogFormat, LogSettings, TelemetrySettings};

pub mod traces;

pub use traces::{ExporterError, TRACE_TARGET, traceparent};

/// Installs the global subscriber once (later calls, in tests, are no-ops): the log lines, and
/// the trace exporter when `telemetry` names a collector. Call it inside the tokio runtime,
/// which carries the exports; an exporter that cannot be built stops the start.
pub fn init(settings: &LogSettings, telemetry: &TelemetrySettings) -> Result<(), ExporterError> {
    let filter =
        EnvFilter::try_from_default_env().unwrap_or_else(|_| EnvFilter::new(&settings.level));
    // The exported spans are for the trace layer alone, whatever `RUST_LOG` asks of the logs.
    let filter = match format!("{TRACE_TARGET}=off").parse() {
        Ok(directive) => filter.add_directive(directive),
        Err(_) => filter,
    };
    let lines = match settings.format {
        LogFormat::Json => tracing_subscriber::fmt::layer()
            .with_writer(std::io::stderr)
            .json()
            .with_current_span(true)
            .with_span_list(false)
            .boxed(),
        LogFormat::Pretty => tracing_subscriber::fmt::layer()
            .with_writer(std::io::stderr)
            .with_ansi(std::io::stderr().is_terminal())
            .compact()
            .boxed(),
    };
    let exported = traces::layer(telemetry)?;
    let result = tracing_subscriber::registry()
        .with(exported)
        .with(lines.with_filter(filter))
        .try_init();
    drop(result);
    Ok(())
}

/// Longest user-supplied text written into one log field, in characters.
pub const MAX_LOGGED_CHARS: usize = 128;

/// A user-supplied string as a log field: at most [`MAX_LOGGED_CHARS`] characters (the rest
/// counted, not written) and every control character escaped, so that no client can flood the
/// logs or forge a line of its own.
pub struct UserText<'a>(pub &'a str);

impl fmt::Display for UserText<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut chars = self.0.chars();
        for c in chars.by_ref().take(MAX_LOGGED_CHARS) {
            if c.is_control() {
                write!(f, "{}", c.escape_default())?;
            } else {
                write!(f, "{c}")?;
            }
        }
        let rest = chars.count();
        if rest > 0 {
            write!(f, "… ({rest} more characters)")?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn user_text_is_capped_and_escaped() {
        let forged = format!("a\nFORGED\r\u{1b}[2J{}", "b".repeat(500));
        let logged = UserText(&forged).to_string();
        assert!(!logged.chars().any(char::is_control), "{logged}");
        assert!(logged.starts_with("a\\nFORGED\\r\\u{1b}[2J"), "{logged}");
        assert!(logged.ends_with("… (385 more characters)"), "{logged}");
        assert_eq!(UserText("plain").to_string(), "plain");
    }
}
