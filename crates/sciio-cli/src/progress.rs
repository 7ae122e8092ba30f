//! The conversion progress bar: on stderr, only on a terminal (indicatif hides itself
//! otherwise), and only once a conversion has run longer than a moment ([`SHOW_AFTER`], or the
//! milliseconds in `SCIIO_PROGRESS_AFTER_MS`: tests set 0 to draw the bar whatever the speed).

use std::time::{Duration, Instant};

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressState, ProgressStyle};

/// How long a conversion runs before the bar appears (quick ones never flash a bar).
const SHOW_AFTER: Duration = Duration::from_millis(400);

/// Environment variable overriding [`SHOW_AFTER`], in milliseconds.
const SHOW_AFTER_VAR: &str = "SCIIO_PROGRESS_AFTER_MS";

/// A byte-progress bar that appears after [`SHOW_AFTER`].
#[derive(Debug)]
pub struct Progress {
    bar: ProgressBar,
    started: Instant,
    show_after: Duration,
    visible: bool,
}

impl Progress {
    /// A hidden bar labelled `label`; with `rows`, the records the data is in, it shows the
    /// rows done beside the bytes (the bytes' share of them: the data goes row after row).
    pub fn new(label: &str, rows: Option<u64>) -> Progress {
        let bar = ProgressBar::with_draw_target(Some(0), ProgressDrawTarget::hidden());
        let template = match rows {
            Some(_) => "{msg} [{bar:30}] {bytes}/{total_bytes} {rows} {bytes_per_sec} eta {eta}",
            None => "{msg} [{bar:30}] {bytes}/{total_bytes} {bytes_per_sec} eta {eta}",
        };
        if let Ok(style) = ProgressStyle::with_template(template) {
            let style = style.progress_chars("=> ");
            let style = match rows {
                Some(total) => style.with_key(
                    "rows",
                    move |state: &ProgressState, w: &mut dyn std::fmt::Write| {
                        let _ = write!(w, "{}", rows_done(state.pos(), state.len(), total));
                    },
                ),
                None => style,
            };
            bar.set_style(style);
        }
        bar.set_message(label.to_string());
        Progress {
            bar,
            started: Instant::now(),
            show_after: std::env::var(SHOW_AFTER_VAR)
                .ok()
                .and_then(|ms| ms.trim().parse().ok())
                .map_or(SHOW_AFTER, Duration::from_millis),
            visible: false,
        }
    }

    /// Records `done` of `total` bytes; shows the bar once the conversion is slow enough.
    pub fn update(&mut self, done: u64, total: u64) {
        self.bar.set_length(total);
        self.bar.set_position(done);
        if !self.visible && self.started.elapsed() >= self.show_after {
            self.bar.set_draw_target(ProgressDrawTarget::stderr());
            self.visible = true;
            // Drawn now, not only at the next change (a conversion may make no other).
            self.bar.tick();
        }
    }

    /// Removes the bar.
    pub fn finish(&self) {
        self.bar.finish_and_clear();
    }
}

/// `rows done/total rows` for `done` of `len` bytes of data in `total` rows.
fn rows_done(done: u64, len: Option<u64>, total: u64) -> String {
    let rows = match len {
        Some(len) if len > 0 => {
            (u128::from(done.min(len)) * u128::from(total) / u128::from(len)) as u64
        }
        _ => 0,
    };
    format!("{}/{} rows", grouped(rows), grouped(total))
}

/// `n` with its thousands separated by commas (`30,000,000`).
fn grouped(n: u64) -> String {
    let digits = n.to_string();
    let mut out = String::with_capacity(digits.len() + digits.len() / 3);
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rows_are_the_bytes_share_of_them_grouped() {
        assert_eq!(rows_done(0, Some(800), 100), "0/100 rows");
        assert_eq!(
            rows_done(400, Some(800), 30_000_000),
            "15,000,000/30,000,000 rows"
        );
        assert_eq!(rows_done(800, Some(800), 1234), "1,234/1,234 rows");
        // Past the end or before any length: never more than all, never a division by zero.
        assert_eq!(rows_done(900, Some(800), 7), "7/7 rows");
        assert_eq!(rows_done(5, None, 7), "0/7 rows");
        assert_eq!(rows_done(5, Some(0), 7), "0/7 rows");
        assert_eq!(grouped(999), "999");
        assert_eq!(grouped(1000), "1,000");
        assert_eq!(grouped(u64::MAX), "18,446,744,073,709,551,615");
    }
}
