//! The damage sweep: damaged copies of real and generated files (truncations; bit flips and
//! 0xFF / 0x7F / zero runs, aimed at headers and anywhere in the data: compressed chunks,
//! page headers) go through `sciio convert`, each under a time and address-space limit. A
//! crash, a panic, a hang, more than one error line, a temporary file left behind, or a
//! changed value where a checksum covers the damaged bytes fails the sweep.
//!
//! The seed changes per run and is printed (`SCIIO_SWEEP_SEED=N` repeats a run);
//! `SCIIO_SWEEP_VARIANTS=N` sets the number of variants (a small sample here; `./dev fuzz` runs
//! a large one).

use std::ffi::OsStr;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Mutex;
use std::time::Duration;

use sciio_testkit::LimitedRun;

const ADDRESS_SPACE_KIB: u64 = 2 * 1024 * 1024;
const TIME_LIMIT: Duration = Duration::from_secs(10);
const DEFAULT_VARIANTS: usize = 240;

/// splitmix64: a tiny deterministic generator, so a seed repeats a run exactly.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    fn below(&mut self, n: usize) -> usize {
        (self.next() % n.max(1) as u64) as usize
    }
}

/// A file to damage: its bytes, the ranges a checksum covers, and its undamaged conversion.
struct Source {
    path: PathBuf,
    bytes: Vec<u8>,
    covered: Vec<(usize, usize)>,
    clean_output: Option<Vec<u8>>,
    /// Where the HDF5 metadata libhdf5 parses itself starts (B-tree nodes, local, global and
    /// fractal heaps, shared message tables, v2 object headers): damage is aimed there too.
    metadata: Vec<usize>,
}

/// Signatures of the HDF5 structures libhdf5 parses without sciio's header checks.
const HDF5_SIGNATURES: [&[u8; 4]; 13] = [
    b"TREE", b"HEAP", b"GCOL", b"FRHP", b"FHDB", b"FHIB", b"BTHD", b"BTIN", b"BTLF", b"SMTB",
    b"SMLI", b"OHDR", b"OCHK",
];

fn metadata_offsets(bytes: &[u8]) -> Vec<usize> {
    bytes
        .windows(4)
        .enumerate()
        .filter(|(_, w)| HDF5_SIGNATURES.iter().any(|s| w == s))
        .map(|(at, _)| at)
        .collect()
}

#[derive(Debug, Clone, Copy)]
enum Damage {
    Truncate,
    FlipBit,
    Run(u8, usize),
}

/// One damaged copy: what was done where.
fn damage(source: &Source, rng: &mut Rng) -> (Vec<u8>, String, Option<(usize, usize)>) {
    let mut bytes = source.bytes.clone();
    let len = bytes.len();
    let kind = match rng.below(5) {
        0 => Damage::Truncate,
        1 | 2 => Damage::FlipBit,
        3 => Damage::Run([0xFF, 0x7F][rng.below(2)], 4),
        _ => Damage::Run(0, 8),
    };
    // Aimed at the first and last 2 KiB (headers, footers), at HDF5 metadata structures, or
    // anywhere.
    let at = match rng.below(5) {
        0 => rng.below(len.min(2048)),
        1 => len.saturating_sub(1 + rng.below(len.min(2048))),
        2 if !source.metadata.is_empty() => {
            let start = source.metadata[rng.below(source.metadata.len())];
            (start + rng.below(64)).min(len - 1)
        }
        _ => rng.below(len),
    };
    match kind {
        Damage::Truncate => {
            bytes.truncate(at);
            (bytes, format!("truncated at {at}"), None)
        }
        Damage::FlipBit => {
            let bit = rng.below(8);
            bytes[at] ^= 1 << bit;
            (
                bytes,
                format!("bit {bit} flipped at {at}"),
                Some((at, at + 1)),
            )
        }
        Damage::Run(value, n) => {
            let end = (at + n).min(len);
            bytes[at..end].fill(value);
            (bytes, format!("{value:#04x} x{n} at {at}"), Some((at, end)))
        }
    }
}

fn run_limited(args: &[&Path]) -> LimitedRun {
    let mut argv: Vec<&OsStr> = vec![OsStr::new("convert")];
    argv.extend(args.iter().map(|p| p.as_os_str()));
    sciio_testkit::run_limited(
        Path::new(env!("CARGO_BIN_EXE_sciio")),
        &argv,
        TIME_LIMIT,
        ADDRESS_SPACE_KIB,
    )
}

/// Converts `input` into a fresh `out.npz` in `dir`; the problem with the run, if any, and the
/// output when the conversion succeeded.
fn check_run(input: &Path, dir: &Path) -> (Option<String>, Option<Vec<u8>>) {
    let dest = dir.join("out.npz");
    let run = run_limited(&[input, &dest]);
    let lines: Vec<&str> = run.stderr.lines().collect();
    let left: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n != "out.npz")
        .collect();
    let output = std::fs::read(&dest).ok();
    let _ = std::fs::remove_file(&dest);
    let problem = if run.timed_out {
        Some(format!("hang: killed after {TIME_LIMIT:?}"))
    } else if let Some(signal) = run.signal {
        Some(format!("crash: signal {signal}"))
    } else if run.stderr.contains("internal error") {
        Some(format!("panic: {}", run.stderr.trim()))
    } else if !left.is_empty() {
        Some(format!("left {left:?} behind"))
    } else {
        match run.code {
            Some(0) => None,
            Some(1) if lines.len() == 1 && lines[0].starts_with("sciio: error: ") => None,
            code => Some(format!("exit {code:?}, stderr {:?}", run.stderr)),
        }
    };
    let output = if run.code == Some(0) { output } else { None };
    (problem, output)
}

fn sources(generated: &Path) -> Vec<Source> {
    let manifest = sciio_testkit::run_python_script(
        "python/gen_sweep_sources.py",
        &[generated.to_str().unwrap()],
    );
    let mut list: Vec<(PathBuf, Vec<(usize, usize)>)> = manifest
        .lines()
        .filter_map(|line| {
            let mut parts = line.split_whitespace();
            let name = parts.next()?;
            let covered = parts
                .filter_map(|r| {
                    let (a, b) = r.split_once(':')?;
                    Some((a.parse().ok()?, b.parse().ok()?))
                })
                .collect();
            Some((generated.join(name), covered))
        })
        .collect();
    // Real files nobody here wrote, one or two of each kind.
    let root = sciio_testkit::repo_root();
    let site = sciio_testkit::site_packages();
    for real in [
        root.join("crates/sciio-npy/tests/golden/M8_7D_be.npy"),
        root.join("crates/sciio-mat/tests/data/matlab/test_basic_v73.mat"),
        site.join("tables/tests/Tables_lzo1.h5"),
        site.join("tables/tests/blosc_bigendian.h5"),
        site.join("pyarrow/tests/data/parquet/v0.7.1.all-named-index.parquet"),
        sciio_testkit::shared_corpus("pandas-legacy-hdf").join("legacy_table_0.11.h5"),
    ] {
        assert!(real.exists(), "{} is missing", real.display());
        list.push((real, Vec::new()));
    }
    let dir = sciio_testkit::tempdir();
    list.into_iter()
        .map(|(path, covered)| {
            let (_, clean_output) = check_run(&path, dir.path());
            let bytes = std::fs::read(&path).unwrap();
            let metadata = metadata_offsets(&bytes);
            Source {
                path,
                bytes,
                covered,
                clean_output,
                metadata,
            }
        })
        .collect()
}

#[test]
fn damaged_copies_never_crash_hang_or_leave_files() {
    let seed: u64 = std::env::var("SCIIO_SWEEP_SEED")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or_else(|| {
            std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .map_or(1, |d| d.as_nanos() as u64)
        });
    let variants: usize = std::env::var("SCIIO_SWEEP_VARIANTS")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(DEFAULT_VARIANTS);
    println!("damage sweep: seed {seed} (SCIIO_SWEEP_SEED={seed} repeats it), {variants} variants");
    let generated = sciio_testkit::tempdir();
    let sources = sources(generated.path());
    let next = AtomicUsize::new(0);
    let failures = Mutex::new(Vec::new());
    let tally = Mutex::new([0usize; 2]); // [converted, refused]
    let workers = std::thread::available_parallelism().map_or(2, |n| n.get());
    std::thread::scope(|scope| {
        for _ in 0..workers {
            scope.spawn(|| {
                let dir = sciio_testkit::tempdir();
                let inputs = sciio_testkit::tempdir();
                loop {
                    let i = next.fetch_add(1, Ordering::SeqCst);
                    if i >= variants {
                        break;
                    }
                    let mut rng = Rng(seed ^ (i as u64).wrapping_mul(0x2545_F491_4F6C_DD1D));
                    let source = &sources[i % sources.len()];
                    let (bytes, what, span) = damage(source, &mut rng);
                    let ext = source.path.extension().unwrap().to_string_lossy();
                    let input = inputs.path().join("in").with_extension(ext.as_ref());
                    std::fs::write(&input, &bytes).unwrap();
                    let (problem, output) = check_run(&input, dir.path());
                    let _ = std::fs::remove_file(&input);
                    let covered = span.is_some_and(|(a, b)| {
                        source.covered.iter().any(|&(s, e)| a >= s && b <= e)
                    });
                    let changed = covered
                        && output.is_some()
                        && source.clean_output.is_some()
                        && output != source.clean_output;
                    let problem = problem.or_else(|| {
                        changed.then(|| "converted with other values (checksummed bytes)".into())
                    });
                    let mut t = tally.lock().unwrap();
                    t[usize::from(output.is_none())] += 1;
                    if let Some(p) = problem {
                        let name = source.path.file_name().unwrap().to_string_lossy();
                        failures
                            .lock()
                            .unwrap()
                            .push(format!("{name}, {what}: {p}"));
                    }
                }
            });
        }
    });
    let [converted, refused] = *tally.lock().unwrap();
    println!("damage sweep: {converted} converted, {refused} refused with one error line");
    let failures = failures.into_inner().unwrap();
    assert!(
        failures.is_empty(),
        "seed {seed}: {} of {variants} damaged copies failed:\n{}",
        failures.len(),
        failures.join("\n")
    );
}
