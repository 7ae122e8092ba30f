//! A disk that fills up while sciio writes a PyTables file: the error is reported, and the
//! destination is left absent (new file) or byte-identical (existing file), with no partial
//! temporary file behind. The full disk is RLIMIT_FSIZE in a child process
//! (`sciio_testkit::in_child_process`): writes past the limit fail with EFBIG as they fail with
//! ENOSPC on a full disk, and no root or mount is needed.

use std::path::{Path, PathBuf};

use sciio_hdf5::{ByteOrder, H5Type};
use sciio_pytables::write::{Filters, PtWriter};
use sciio_testkit::{in_child_process, limit_file_size};

/// A "disk" of 512 KiB: a fresh temporary folder, with files limited to 512 KiB.
struct SmallDisk {
    dir: tempfile::TempDir,
}

impl SmallDisk {
    fn mount() -> SmallDisk {
        let dir = sciio_testkit::tempdir();
        limit_file_size(Some(512 << 10));
        SmallDisk { dir }
    }

    fn path(&self, name: &str) -> PathBuf {
        self.dir.path().join(name)
    }

    /// This process's open file descriptors on the disk (deleted files included).
    fn open_fds(&self) -> Vec<String> {
        std::fs::read_dir("/proc/self/fd")
            .unwrap()
            .filter_map(|e| std::fs::read_link(e.ok()?.path()).ok())
            .filter(|target| target.starts_with(self.dir.path()))
            .map(|target| target.display().to_string())
            .collect()
    }

    /// The disk holds exactly `names` and this process has nothing open on it.
    fn assert_only(&self, names: &[&str]) {
        assert_eq!(self.entries(), names, "partial files left");
        assert_eq!(
            self.open_fds(),
            Vec::<String>::new(),
            "descriptors left open"
        );
    }

    fn entries(&self) -> Vec<String> {
        let mut names: Vec<String> = std::fs::read_dir(self.dir.path())
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        names.sort();
        names
    }
}

fn f8() -> H5Type {
    H5Type::Float {
        size: 8,
        precision: 64,
        order: ByteOrder::Little,
    }
}

/// Incompressible bytes (a xorshift stream), `n` doubles' worth.
fn noise(n: usize) -> Vec<u8> {
    let mut x = 0x2545_f491_4f6c_dd1du64;
    (0..n)
        .flat_map(|_| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x.to_le_bytes()
        })
        .collect()
}

/// Writes an EArray of 2 MiB of noise in 64 KiB appends (zlib: compression does not help);
/// the first error met is returned.
fn write_too_much(path: &Path) -> sciio_core::Result<()> {
    let file = PtWriter::create(path)?;
    let mut e = file
        .root()?
        .create_earray("e", f8(), vec![])
        .filters(Filters::parse("zlib:1")?)
        .chunk_shape(vec![8192])
        .create()?;
    for block in noise(256 * 1024).chunks(64 * 1024) {
        e.append(block)?;
    }
    drop(e);
    file.finish()
}

#[test]
fn a_full_disk_leaves_no_destination_behind() {
    in_child_process("a_full_disk_leaves_no_destination_behind", || {
        let disk = SmallDisk::mount();
        let dst = disk.path("new.h5");
        let err = write_too_much(&dst).unwrap_err();
        let text = err.to_string();
        assert!(
            text.contains("new.h5") && !text.contains('\n'),
            "one line naming the file: {text}"
        );
        assert!(!dst.exists());
        disk.assert_only(&[]);
    });
}

#[test]
fn a_full_disk_leaves_an_existing_destination_intact() {
    in_child_process("a_full_disk_leaves_an_existing_destination_intact", || {
        let disk = SmallDisk::mount();
        let dst = disk.path("old.h5");
        let file = PtWriter::create(&dst).unwrap();
        let data = sciio_hdf5::RawData {
            ty: f8(),
            shape: vec![100],
            bytes: noise(100),
        };
        file.root()
            .unwrap()
            .create_array("x", &data, "kept")
            .unwrap();
        file.finish().unwrap();
        let before = std::fs::read(&dst).unwrap();
        assert!(write_too_much(&dst).is_err());
        assert_eq!(std::fs::read(&dst).unwrap(), before);
        disk.assert_only(&["old.h5"]);
        // PyTables still reads the old file (no limit on what Python writes).
        limit_file_size(None);
        let out = sciio_testkit::run_python(
            "import sys, tables\nwith tables.open_file(sys.argv[1]) as f: print(f.root.x.title, f.root.x.nrows)",
            &[dst.to_str().unwrap()],
        );
        assert_eq!(out.trim(), "kept 100");
    });
}

/// An empty float64 EArray at /e, zlib 1, 8192-row chunks.
fn zlib_earray(file: &PtWriter) -> sciio_pytables::write::PtEArray {
    file.root()
        .unwrap()
        .create_earray("e", f8(), vec![])
        .filters(Filters::parse("zlib:1").unwrap())
        .chunk_shape(vec![8192])
        .create()
        .unwrap()
}

/// Fills the disk: from now on no file grows past the page (4 KiB) it already ends in, as on
/// a full disk where only the pages a file holds can still be written.
fn fill_up(disk: &SmallDisk) {
    let largest = std::fs::read_dir(disk.dir.path())
        .unwrap()
        .map(|e| e.unwrap().metadata().unwrap().len())
        .max()
        .unwrap_or(0);
    limit_file_size(Some(largest.div_ceil(4096) * 4096));
}

#[test]
fn a_disk_full_at_close_is_reported_and_releases_the_file() {
    in_child_process(
        "a_disk_full_at_close_is_reported_and_releases_the_file",
        || {
            let disk = SmallDisk::mount();
            let dst = disk.path("late.h5");
            let file = PtWriter::create(&dst).unwrap();
            let mut e = zlib_earray(&file);
            e.append(&noise(8192 * 4)).unwrap();
            drop(e);
            // Everything so far fits; the metadata of these groups, kept in libhdf5's cache until
            // the file is closed, does not.
            fill_up(&disk);
            let root = file.root().unwrap();
            for i in 0..200 {
                // Errors here would be fine too; the point is what close reports and releases.
                if root.create_group(&format!("g{i}"), "late", None).is_err() {
                    break;
                }
            }
            let err = file.finish().unwrap_err().to_string();
            assert!(err.contains("late.h5") && !err.contains('\n'), "{err}");
            disk.assert_only(&[]);
        },
    );
}

/// Appends 4.5 chunks of noise to a new EArray: four chunks are written now, the half chunk
/// is held in memory (written at close).
fn earray_with_held_tail(file: &PtWriter) -> sciio_pytables::write::PtEArray {
    let mut e = zlib_earray(file);
    e.append(&noise(8192 * 4 + 4096)).unwrap();
    e
}

#[test]
fn a_disk_full_when_the_held_tail_is_written_is_reported() {
    in_child_process(
        "a_disk_full_when_the_held_tail_is_written_is_reported",
        || {
            // The tail is written by `finish` (the EArray still alive) or when the EArray is dropped
            // (the error then waits for `finish`): either way `finish` fails and leaves nothing.
            for drop_first in [false, true] {
                let disk = SmallDisk::mount();
                let dst = disk.path("tail.h5");
                let file = PtWriter::create(&dst).unwrap();
                let e = earray_with_held_tail(&file);
                fill_up(&disk);
                let alive = if drop_first {
                    drop(e);
                    None
                } else {
                    Some(e)
                };
                let err = file.finish().unwrap_err().to_string();
                drop(alive);
                assert!(err.contains("tail.h5") && !err.contains('\n'), "{err}");
                // The failure reported is the held tail's own write (chunk 4, rows 32768..).
                assert!(
                    err.contains(":/e:") && err.contains("chunk at [32768]"),
                    "{err}"
                );
                assert!(!dst.exists());
                disk.assert_only(&[]);
            }
        },
    );
}
