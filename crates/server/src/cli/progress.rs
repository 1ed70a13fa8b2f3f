//! Progress of the long commands (`corpus reindex`, `corpus import`, `data install-bible`) on
//! stderr, so an operator knows the work is moving and when it will end: a bar redrawn in place
//! on a terminal, otherwise (a log file, CI) a line when the work starts and every ten seconds.
//! Each says sections done, the rate and the time left; the command's own closing line says
//! what was done and in how long.

use std::io::{IsTerminal, Write};
use std::time::{Duration, Instant};

/// How often a bar on a terminal is redrawn.
const TERMINAL_EVERY: Duration = Duration::from_millis(200);
/// How often a line is written when stderr is not a terminal.
const LOG_EVERY: Duration = Duration::from_secs(10);
/// Width of the bar, in characters.
const BAR_WIDTH: usize = 30;

/// Shows the progress of one write of the corpus, counted in sections.
pub struct Reporter {
    what: &'static str,
    terminal: bool,
    started: Instant,
    shown: Option<Instant>,
    total: usize,
    done: usize,
    finishing: bool,
}

impl Reporter {
    /// A reporter for the work named `what` (e.g. "reindex"), drawing a bar when stderr is a
    /// terminal.
    pub fn new(what: &'static str) -> Reporter {
        Reporter {
            what,
            terminal: std::io::stderr().is_terminal(),
            started: Instant::now(),
            shown: None,
            total: 0,
            done: 0,
            finishing: false,
        }
    }

    fn show(&mut self, now: Instant) {
        let elapsed = now.duration_since(self.started);
        let status = if self.finishing {
            format!("{} sections written; writing the index", self.done)
        } else {
            describe(self.done, self.total, elapsed)
        };
        let mut stderr = std::io::stderr().lock();
        // Progress is a courtesy: a closed stderr never stops the work.
        let _ = if self.terminal {
            write!(
                stderr,
                "\r{} [{}] {status}\x1b[K",
                self.what,
                bar(self.done, self.total)
            )
            .and_then(|()| stderr.flush())
        } else {
            writeln!(stderr, "{}: {status}", self.what)
        };
        self.shown = Some(now);
    }
}

impl corpus::Progress for Reporter {
    fn start(&mut self, sections: usize) {
        self.total = sections;
        self.started = Instant::now();
        self.show(self.started);
    }

    fn advance(&mut self, sections: usize) {
        self.done = sections;
        let now = Instant::now();
        let every = if self.terminal {
            TERMINAL_EVERY
        } else {
            LOG_EVERY
        };
        if self
            .shown
            .is_none_or(|shown| now.duration_since(shown) >= every)
        {
            self.show(now);
        }
    }

    fn finishing(&mut self, sections: usize) {
        self.done = sections;
        self.finishing = true;
        self.show(Instant::now());
    }
}

impl Drop for Reporter {
    /// Ends the bar's line, so the command's summary starts a fresh one.
    fn drop(&mut self) {
        if self.terminal && self.shown.is_some() {
            let _ = writeln!(std::io::stderr());
        }
    }
}

/// "1200 of 4800 sections (25%), 40 a second, about 1 min 30 s left".
pub fn describe(done: usize, total: usize, elapsed: Duration) -> String {
    let percent = (done * 100).checked_div(total).unwrap_or(100);
    let seconds = elapsed.as_secs_f64();
    if done == 0 || seconds <= 0.0 {
        return format!("{done} of {total} sections ({percent}%)");
    }
    let rate = done as f64 / seconds;
    let left = Duration::from_secs_f64(total.saturating_sub(done) as f64 / rate);
    format!(
        "{done} of {total} sections ({percent}%), {} a second, about {} left",
        rate_text(rate),
        duration_text(left)
    )
}

/// The closing figure of a command: "4800 sections in 2 min 0 s (40 a second)".
pub fn summary(sections: usize, elapsed: Duration) -> String {
    let seconds = elapsed.as_secs_f64().max(1e-3);
    format!(
        "{sections} sections in {} ({} a second)",
        duration_text(elapsed),
        rate_text(sections as f64 / seconds)
    )
}

fn rate_text(rate: f64) -> String {
    if rate >= 10.0 {
        format!("{rate:.0}")
    } else {
        format!("{rate:.1}")
    }
}

/// Whole seconds below a minute ("42 s", "0.4 s" below one), minutes and seconds above.
pub fn duration_text(duration: Duration) -> String {
    let seconds = duration.as_secs();
    match seconds {
        0 => format!("{:.1} s", duration.as_secs_f64()),
        1..60 => format!("{seconds} s"),
        60..3600 => format!("{} min {} s", seconds / 60, seconds % 60),
        _ => format!("{} h {} min", seconds / 3600, seconds % 3600 / 60),
    }
}

fn bar(done: usize, total: usize) -> String {
    let filled = (done.min(total) * BAR_WIDTH)
        .checked_div(total)
        .unwrap_or(BAR_WIDTH);
    format!("{}{}", "#".repeat(filled), "-".repeat(BAR_WIDTH - filled))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_status_gives_the_share_rate_and_time_left() {
        assert_eq!(
            describe(1200, 4800, Duration::from_secs(30)),
            "1200 of 4800 sections (25%), 40 a second, about 1 min 30 s left"
        );
        assert_eq!(
            describe(0, 4800, Duration::from_secs(3)),
            "0 of 4800 sections (0%)"
        );
        assert_eq!(
            describe(3, 12, Duration::from_secs(2)),
            "3 of 12 sections (25%), 1.5 a second, about 6 s left"
        );
        assert_eq!(describe(0, 0, Duration::ZERO), "0 of 0 sections (100%)");
    }

    #[test]
    fn summaries_and_durations_read_naturally() {
        assert_eq!(
            summary(56_469, Duration::from_secs(1177)),
            "56469 sections in 19 min 37 s (48 a second)"
        );
        assert_eq!(duration_text(Duration::from_millis(420)), "0.4 s");
        assert_eq!(duration_text(Duration::from_secs(7300)), "2 h 1 min");
    }

    #[test]
    fn the_bar_fills_with_the_work() {
        assert_eq!(bar(0, 10), "-".repeat(BAR_WIDTH));
        assert_eq!(bar(5, 10), format!("{}{}", "#".repeat(15), "-".repeat(15)));
        assert_eq!(bar(10, 10), "#".repeat(BAR_WIDTH));
        assert_eq!(bar(0, 0), "#".repeat(BAR_WIDTH));
    }
}
