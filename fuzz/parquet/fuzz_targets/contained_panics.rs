//! Shared by the parquet fuzz targets: a module of theirs, not a target (fuzz/parquet/Cargo.toml
//! lists the targets).

/// libfuzzer-sys' panic hook aborts on every panic, even one sciio's reader catches and
/// reports as a Corrupt error (`sciio_core::contain`: arrow-rs asserts on damaged pages):
/// such a panic is the clean error these targets want, so only the others abort.
pub fn abort_only_on_uncontained_panics() {
    static HOOK: std::sync::Once = std::sync::Once::new();
    HOOK.call_once(|| {
        let abort = std::panic::take_hook();
        std::panic::set_hook(Box::new(move |info| {
            if !sciio_core::contain::panic_is_contained() {
                abort(info);
            }
        }));
    });
}
