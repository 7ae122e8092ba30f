//! The conversion progress bar: on stderr, only on a terminal (indicatif hides itself
//! otherwise), and only once a conversion has run longer than a moment.

use std::time::{Duration, Instant};

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};

/// How long a conversion runs before the bar appears (quick ones never flash a bar).
const SHOW_AFTER: Duration = Duration::from_millis(400);

/// A byte-progress bar that appears after [`SHOW_AFTER`].
#[derive(Debug)]
pub struct Progress {
    bar: ProgressBar,
    started: Instant,
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
            visible: false,
        }
    }

    /// Records `done` of `total` bytes; shows the bar once the conversion is slow enough.
    pub fn update(&mut self, done: u64, total: u64) {
        self.bar.set_length(total);
        self.bar.set_position(done);
        if !self.visible && self.started.elapsed() >= SHOW_AFTER {
            self.bar.set_draw_target(ProgressDrawTarget::stderr());
            self.visible = true;
        }
    }

    /// Removes the bar.
    pub fn finish(&self) {
        self.bar.finish_and_clear();
    }
}
