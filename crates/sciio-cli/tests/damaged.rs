//! The damaged files of the shared corpus (`../shared/corpus/damaged/`: flipped bytes and
//! overwritten runs in blosc2/b2nd chunks, Parquet page headers and HDF5 type messages, on
//! which `sciio convert` once crashed inside c-blosc2, panicked inside arrow-rs or wrote fill
//! values without bound) each give one clean error line, quickly, in bounded memory, and leave
//! nothing behind.

use std::ffi::OsStr;
use std::path::Path;
use std::time::Duration;

use sciio_testkit::LimitedRun;

/// Address-space limit for each run (KiB, as `ulimit -v` takes it): 2 GiB.
const ADDRESS_SPACE_KIB: u64 = 2 * 1024 * 1024;
const TIME_LIMIT: Duration = Duration::from_secs(10);

/// Runs `sciio args...` under the address-space limit, killed after the time limit.
fn run_limited(args: &[&str]) -> LimitedRun {
    let args: Vec<&OsStr> = args.iter().map(OsStr::new).collect();
    sciio_testkit::run_limited(
        Path::new(env!("CARGO_BIN_EXE_sciio")),
        &args,
        TIME_LIMIT,
        ADDRESS_SPACE_KIB,
    )
}

fn s(p: &Path) -> &str {
    p.to_str().unwrap()
}

/// What is wrong with a run that should have failed with one error line, if anything.
fn problem_with(run: &LimitedRun) -> Option<String> {
    let lines: Vec<&str> = run.stderr.lines().collect();
    if run.timed_out {
        return Some(format!("killed after {:?}", run.elapsed));
    }
    if let Some(signal) = run.signal {
        return Some(format!("ended by signal {signal}"));
    }
    match run.code {
        None => Some("no exit code".to_string()),
        Some(1) if lines.len() == 1 && lines[0].starts_with("sciio: error: ") => lines[0]
            .contains("internal error")
            .then(|| lines[0].to_string()),
        Some(code) => Some(format!("exit {code}, stderr {:?}", run.stderr)),
    }
}

fn leftovers(dir: &Path) -> Vec<String> {
    std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect()
}

#[test]
fn every_damaged_file_gives_one_clean_error_and_leaves_nothing() {
    let corpus = sciio_testkit::shared_corpus("damaged");
    let mut files: Vec<_> = std::fs::read_dir(&corpus)
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    files.sort();
    assert!(
        files.len() >= 27,
        "the damaged corpus has {} files",
        files.len()
    );
    let mut failures = Vec::new();
    for file in &files {
        let name = file.file_name().unwrap().to_string_lossy().into_owned();
        let ext = file.extension().unwrap().to_string_lossy().into_owned();
        let destinations = match ext.as_str() {
            "parquet" => vec!["out.npz", "out.parquet"],
            _ => vec!["out.npz"],
        };
        for dest_name in destinations {
            let out_dir = sciio_testkit::tempdir();
            let dest = out_dir.path().join(dest_name);
            let run = run_limited(&["convert", s(file), s(&dest)]);
            let left = leftovers(out_dir.path());
            // arrow-rs panicked on these pages: the error names where the damage is.
            let located = ext != "parquet"
                || (run.stderr.contains("row group ") && run.stderr.contains(", column '"));
            if let Some(p) = problem_with(&run) {
                failures.push(format!("{name} -> {dest_name}: {p}"));
            } else if !located {
                failures.push(format!("{name} -> {dest_name}: unlocated {}", run.stderr));
            } else if !left.is_empty() {
                failures.push(format!("{name} -> {dest_name}: left {left:?} behind"));
            }
        }
        // `cat` decodes the same data for the terminal.
        if let Some(p) = problem_with(&run_limited(&["cat", s(file)])) {
            failures.push(format!("cat {name}: {p}"));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

/// Cuts `src` at several points and converts each cut: the error says the file is truncated
/// and where, whatever part was lost.
fn check_truncations(src: &Path, failures: &mut Vec<String>) {
    let bytes = std::fs::read(src).unwrap();
    let ext = src.extension().unwrap().to_string_lossy().into_owned();
    let dir = sciio_testkit::tempdir();
    for percent in [1, 5, 20, 50, 80, 95, 99] {
        let cut = bytes.len() * percent / 100;
        let input = dir.path().join(format!("cut{percent}.{ext}"));
        std::fs::write(&input, &bytes[..cut]).unwrap();
        let dest = dir.path().join("out.npz");
        let run = run_limited(&["convert", s(&input), s(&dest)]);
        let said_truncated = run.stderr.contains("truncated") && run.stderr.contains("byte");
        match problem_with(&run) {
            Some(p) => failures.push(format!("{} cut at {cut}: {p}", src.display())),
            None if !said_truncated => failures.push(format!(
                "{} cut at {cut} of {}: {}",
                src.display(),
                bytes.len(),
                run.stderr.trim()
            )),
            None => {}
        }
    }
}

#[test]
fn truncated_files_say_they_are_truncated_and_where() {
    let root = sciio_testkit::repo_root();
    let site = sciio_testkit::site_packages();
    let mut failures = Vec::new();
    let npz = sciio_testkit::tempdir();
    let npz_path = npz.path().join("two.npz");
    sciio_testkit::run_python(
        "import numpy as np, sys; np.savez(sys.argv[1], a=np.arange(1000.0), b=np.ones((30, 30)))",
        &[s(&npz_path)],
    );
    for src in [
        root.join("crates/sciio-npy/tests/golden/M8_25s.npy"),
        npz_path,
        site.join("tables/tests/Tables_lzo1.h5"),
        root.join("crates/sciio-mat/tests/data/matlab/test_basic_v73.mat"),
        site.join("pyarrow/tests/data/parquet/v0.7.1.parquet"),
    ] {
        check_truncations(&src, &mut failures);
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[test]
fn bytes_from_a_damaged_header_never_reach_the_terminal_raw() {
    let dir = sciio_testkit::tempdir();
    let path = dir.path().join("escape.npy");
    // A header whose descr holds an escape sequence and a bell.
    let dict = "{'descr': '\u{1b}[31m\u{7}<f8', 'fortran_order': False, 'shape': (1,), }";
    let mut header = dict.to_string();
    while !(10 + header.len() + 1).is_multiple_of(64) {
        header.push(' ');
    }
    header.push('\n');
    let mut bytes = b"\x93NUMPY\x01\x00".to_vec();
    bytes.extend((header.len() as u16).to_le_bytes());
    bytes.extend(header.as_bytes());
    bytes.extend([0u8; 8]);
    std::fs::write(&path, bytes).unwrap();
    let run = run_limited(&["cat", s(&path)]);
    assert_eq!(problem_with(&run), None);
    assert!(
        !run.stderr.trim_end().chars().any(char::is_control),
        "raw control characters in {:?}",
        run.stderr
    );
    assert!(run.stderr.contains("\\u{1b}"), "{:?}", run.stderr);
}

#[test]
fn names_from_a_file_never_escape_the_destination_or_drive_the_terminal() {
    let dir = sciio_testkit::tempdir();
    let src = dir.path().join("names.h5");
    // HDF5 accepts '..', backslashes and control characters in link names: a group '..'
    // would make the member '../x.npy'.
    sciio_testkit::run_python(
        "import h5py, numpy as np, sys\n\
         with h5py.File(sys.argv[1], 'w') as f:\n\
         \x20   f.create_group('..').create_dataset('x', data=np.arange(2))\n",
        &[s(&src)],
    );
    let out = dir.path().join("out");
    std::fs::create_dir(&out).unwrap();
    let run = run_limited(&["convert", s(&src), s(&out.join("all.npz"))]);
    assert_eq!(problem_with(&run), None);
    assert!(run.stderr.contains("'..'"), "{}", run.stderr);
    assert!(leftovers(&out).is_empty(), "{:?}", leftovers(&out));

    let src = dir.path().join("escape.h5");
    sciio_testkit::run_python(
        "import h5py, numpy as np, sys\n\
         with h5py.File(sys.argv[1], 'w') as f:\n\
         \x20   f.create_dataset('red\\x1b[31mname', data=np.arange(2))\n",
        &[s(&src)],
    );
    let listed = sciio_testkit::child_command(env!("CARGO_BIN_EXE_sciio"))
        .args(["ls", s(&src)])
        .output()
        .unwrap();
    assert!(listed.status.success());
    let text = String::from_utf8(listed.stdout).unwrap();
    assert!(!text.contains('\u{1b}'), "raw escape in {text:?}");
    assert!(text.contains("red\\u{1b}[31mname"), "{text}");
}

/// Found by the damage sweep (seed 1795592486103106212: bit 5 of byte 1207 of PyTables'
/// `Tables_lzo1.h5` flipped): `/tuple0` claims 2**61 rows, so the byte sizes of the file's
/// tables overflowed when summed for the progress total, and `convert` panicked. Now the
/// damaged table is refused in one line and nothing is left behind.
#[test]
fn sweep_found_table_sizes_that_overflow_when_summed() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/data/sweep/lzo_table_claims_2e18_rows.h5");
    let dir = sciio_testkit::tempdir();
    for (dst, node) in [("all.npz", None), ("t.npy", Some("/tuple0"))] {
        let out = dir.path().join(dst);
        let src_arg = match node {
            Some(n) => format!("{}:{n}", s(&src)),
            None => s(&src).to_string(),
        };
        let run = run_limited(&["convert", &src_arg, s(&out)]);
        assert_eq!(problem_with(&run), None, "{dst}: {run:?}");
        assert!(run.stderr.contains("tuple0"), "{dst}: {}", run.stderr);
        assert!(leftovers(dir.path()).is_empty(), "{dst}");
    }
}
