//! The conversion progress bar: on stderr, only on a terminal (indicatif hides itself
//! otherwise), and only once a conversion has run longer than a moment ([`SHOW_AFTER`], or the
//! milliseconds in `SCIIO_PROGRESS_AFTER_MS`: tests set 0 to draw the bar whatever the speed).

use std::time::{Duration, Instant};

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};

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
    /// A hidden bar labelled `label`.
    pub fn new(label: &str) -> Progress {
        let bar = ProgressBar::with_draw_target(Some(0), ProgressDrawTarget::hidden());
        if let Ok(style) = ProgressStyle::with_template(
            "{msg} [{bar:30}] {bytes}/{total_bytes} {bytes_per_sec} eta {eta}",
        ) {
            bar.set_style(style.progress_chars("=> "));
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
