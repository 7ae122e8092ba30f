//! A file whose `flock` is held for a moment (a child process spawned by another thread holds
//! a copy of every descriptor until its exec) opens once the lock goes; a lock held on is
//! still an error naming the lock.
#![cfg(unix)]

use std::os::fd::AsRawFd;
use std::time::{Duration, Instant};

use sciio_hdf5::write::FileBuilder;
use sciio_hdf5::File;
use sciio_testkit::tempdir;

fn hold_exclusive_lock(path: &std::path::Path) -> std::fs::File {
    let holder = std::fs::File::open(path).unwrap();
    // SAFETY: a valid descriptor owned by `holder`.
    let rc = unsafe { libc::flock(holder.as_raw_fd(), libc::LOCK_EX | libc::LOCK_NB) };
    assert_eq!(rc, 0, "could not take the lock for the test");
    holder
}

#[test]
fn a_lock_released_within_moments_does_not_fail_the_open() {
    let dir = tempdir();
    let path = dir.path().join("brief.h5");
    FileBuilder::new().create(&path).unwrap().close().unwrap();
    let holder = hold_exclusive_lock(&path);
    let release = std::thread::spawn(move || {
        std::thread::sleep(Duration::from_millis(60));
        drop(holder);
    });
    let started = Instant::now();
    let opened = File::open(&path);
    release.join().unwrap();
    assert!(opened.is_ok(), "{:?}", opened.err());
    assert!(started.elapsed() >= Duration::from_millis(50));
}

#[test]
fn a_lock_held_on_is_an_error_that_says_so() {
    let dir = tempdir();
    let path = dir.path().join("held.h5");
    FileBuilder::new().create(&path).unwrap().close().unwrap();
    let _holder = hold_exclusive_lock(&path);
    let started = Instant::now();
    let Err(error) = File::open(&path) else {
        panic!("a locked file must not open")
    };
    assert!(error.to_string().contains("unable to lock file"), "{error}");
    assert!(started.elapsed() < Duration::from_secs(5));
    let Err(error) = FileBuilder::new().open_rw(&path) else {
        panic!("nor for writing")
    };
    assert!(error.to_string().contains("lock"), "{error}");
}

/// A lock that a leaked copy of a descriptor holds (a tool spawned while another test thread
/// was inside `H5Fcreate`) does not fail the reference tools' opens: the test kit runs them
/// with libhdf5's file locking off. h5py failed here with errno 11 before.
#[test]
fn a_reference_tool_opens_a_file_whose_lock_a_leaked_descriptor_holds() {
    let dir = tempdir();
    let path = dir.path().join("leaked.h5");
    FileBuilder::new().create(&path).unwrap().close().unwrap();
    let _holder = hold_exclusive_lock(&path);
    let out = sciio_testkit::run_python(
        "import sys, h5py\nwith h5py.File(sys.argv[1], 'r') as f: print(len(f))",
        &[&path.to_string_lossy()],
    );
    assert_eq!(out.trim(), "0");
}
