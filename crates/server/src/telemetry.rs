//! Log setup: pretty lines in development, JSON in production, both on stderr (stdout carries
//! only the one line that says where the server listens); `RUST_LOG` overrides the level.

use std::io::IsTerminal;

use tracing_subscriber::EnvFilter;
use tracing_subscriber::layer::SubscriberExt;
use tracing_subscriber::util::SubscriberInitExt;

use crate::config::{LogFormat, LogSettings};

/// Installs the global subscriber once; later calls (tests) are no-ops.
pub fn init(settings: &LogSettings) {
    let filter =
        EnvFilter::try_from_default_env().unwrap_or_else(|_| EnvFilter::new(&settings.level));
    let registry = tracing_subscriber::registry().with(filter);
    let result = match settings.format {
        LogFormat::Json => registry
            .with(
                tracing_subscriber::fmt::layer()
                    .with_writer(std::io::stderr)
                    .json()
                    .with_current_span(true)
                    .with_span_list(false),
            )
            .try_init(),
        LogFormat::Pretty => registry
            .with(
                tracing_subscriber::fmt::layer()
                    .with_writer(std::io::stderr)
                    .with_ansi(std::io::stderr().is_terminal())
                    .compact(),
            )
            .try_init(),
    };
    drop(result);
}
