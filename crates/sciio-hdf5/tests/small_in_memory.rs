//! `File::open_in_memory` + `File::small_dataset_at`: small datasets decoded from the file's
//! in-memory image without libhdf5 equal what libhdf5 reads (attributes and data), for files
//! h5py, hdf5storage and MATLAB wrote; everything else is left to libhdf5 (`None`), and
//! damaged headers never panic.

use std::collections::HashSet;
use std::path::Path;

use sciio_core::Limits;
use sciio_hdf5::{File, Group, LinkKind};
use sciio_testkit::{run_python, tempdir, wheel_files};

const WRITE: &str = r#"
import sys, h5py, numpy as np
libver = sys.argv[2]
with h5py.File(sys.argv[1], "w", libver=(libver, "latest") if libver != "earliest" else "earliest") as f:
    g = f.create_group("g")
    for t in ["<i1", "<u2", ">i4", "<u8", ">i8", "<f4", ">f8", "<f8"]:
        d = g.create_dataset("n" + t.replace("<", "le").replace(">", "be"), data=np.arange(6, dtype=t).reshape(2, 3))
        d.attrs["MATLAB_class"] = np.bytes_(b"double")
        d.attrs["scale"] = np.float32(2.5)
        d.attrs["dims"] = np.array([2, 3], dtype=">u8")
    g.create_dataset("scalar", data=np.float64(7.25))
    g.create_dataset("text", data=np.array([b"abc", b"de"], dtype="S4"))
    g.create_dataset("utf8", data=np.array(["x"], dtype=h5py.string_dtype("utf-8", 3)))
    g.create_dataset("refs", data=[g["scalar"].ref, g.ref], dtype=h5py.ref_dtype)
    sid = h5py.h5s.create_simple((4,))
    dcpl = h5py.h5p.create(h5py.h5p.DATASET_CREATE)
    dcpl.set_layout(h5py.h5d.COMPACT)
    h5py.h5d.create(g.id, b"compact", h5py.h5t.NATIVE_INT16, sid, dcpl=dcpl).write(
        h5py.h5s.ALL, h5py.h5s.ALL, np.array([1, -2, 3, -4], dtype=np.int16))
    # Left to libhdf5: chunked, compressed, vlen attributes and data, empty, fill-valued.
    g.create_dataset("chunked", data=np.arange(100.0), chunks=(10,))
    g.create_dataset("gzip", data=np.arange(100.0), compression="gzip")
    v = g.create_dataset("vattr", data=np.arange(3.0))
    v.attrs["names"] = "a variable-length string"
    g.create_dataset("vlen", data=["a", "bc"], dtype=h5py.string_dtype())
    g.create_dataset("empty", shape=(0, 3), dtype="f8")
    g.create_dataset("unwritten", shape=(5,), dtype="f8")
"#;

/// Every dataset below `group` (hard links only, each object once), by path and address.
fn datasets(file: &File, group: &Group, seen: &mut HashSet<u64>, out: &mut Vec<(String, u64)>) {
    for link in group.links().unwrap() {
        let (LinkKind::Hard, Some(addr)) = (&link.kind, link.addr) else {
            continue;
        };
        if !seen.insert(addr) {
            continue;
        }
        let path = sciio_hdf5::join_path(group.path(), &link.name);
        match file.object_at(addr, &path).unwrap() {
            sciio_hdf5::Object::Group(g) => datasets(file, &g, seen, out),
            sciio_hdf5::Object::Dataset(_) => out.push((path, addr)),
            sciio_hdf5::Object::Other(_) => {}
        }
    }
}

/// Checks every dataset decoded from memory against libhdf5; returns the paths decoded.
fn decoded_equal_libhdf5(path: &Path) -> Vec<String> {
    let file = File::open_in_memory(path, Limits::default()).unwrap();
    let mut all = Vec::new();
    datasets(&file, &file.root().unwrap(), &mut HashSet::new(), &mut all);
    let mut decoded = Vec::new();
    for (name, addr) in all {
        let Some((attrs, data)) = file.small_dataset_at(addr) else {
            continue;
        };
        let d = file.dataset(&name).unwrap();
        assert_eq!(
            attrs,
            d.attrs().unwrap(),
            "{}:{name} attributes",
            path.display()
        );
        assert_eq!(data, d.read().unwrap(), "{}:{name} data", path.display());
        decoded.push(name);
    }
    decoded
}

#[test]
fn small_datasets_decoded_in_memory_equal_libhdf5s_reads() {
    let dir = tempdir();
    for libver in ["earliest", "v108", "v110"] {
        let path = dir.path().join(format!("small_{libver}.h5"));
        run_python(WRITE, &[&path.to_string_lossy(), libver]);
        let decoded = decoded_equal_libhdf5(&path);
        if libver == "earliest" {
            // Version-1 object headers (what MAT files use): the plain datasets are decoded...
            for name in [
                "nlei1", "nleu2", "nbei4", "nleu8", "nbei8", "nlef4", "nbef8", "nlef8", "scalar",
                "text", "utf8", "refs", "compact",
            ] {
                assert!(
                    decoded.contains(&format!("/g/{name}")),
                    "{name}: {decoded:?}"
                );
            }
            // ...and the others are left to libhdf5.
            for name in ["chunked", "gzip", "vattr", "vlen", "empty", "unwritten"] {
                assert!(!decoded.contains(&format!("/g/{name}")), "{name}");
            }
        } else {
            // Version-2 object headers ("OHDR") always go through libhdf5.
            assert!(decoded.is_empty(), "{libver}: {decoded:?}");
        }
    }
}

#[test]
fn mat_files_of_matlab_and_hdf5storage_decode_like_libhdf5() {
    let dir = tempdir();
    let path = dir.path().join("hdf5storage.mat");
    run_python(
        r#"
import sys, numpy as np, hdf5storage
cell = np.empty((1, 3), dtype=object)
cell[0, 0] = np.arange(9.0).reshape(3, 3); cell[0, 1] = "text"; cell[0, 2] = np.int8(-3)
hdf5storage.savemat(sys.argv[1], {"c": cell, "s": {"a": 1.5, "b": np.array([True, False])}},
                    format="7.3", store_python_metadata=False)
"#,
        &[&path.to_string_lossy()],
    );
    let decoded = decoded_equal_libhdf5(&path);
    assert!(decoded.len() >= 5, "{decoded:?}");
    let matlab = wheel_files("tables/tests", ".mat");
    assert!(!matlab.is_empty());
    let mut any = false;
    for file in matlab {
        any |= !decoded_equal_libhdf5(&file).is_empty();
    }
    assert!(any, "no dataset of MATLAB's files was decoded in memory");
}

#[test]
fn files_opened_normally_have_no_image_and_damaged_headers_never_panic() {
    let dir = tempdir();
    let path = dir.path().join("small.h5");
    run_python(WRITE, &[&path.to_string_lossy(), "earliest"]);
    let plain = File::open(&path).unwrap();
    let mut all = Vec::new();
    datasets(
        &plain,
        &plain.root().unwrap(),
        &mut HashSet::new(),
        &mut all,
    );
    assert!(all
        .iter()
        .all(|&(_, a)| plain.small_dataset_at(a).is_none()));

    // Every byte of every object header set to a few hostile values, one at a time: a result
    // or `None`, never a panic; addresses off any object give `None`.
    let bytes = std::fs::read(&path).unwrap();
    let damaged = dir.path().join("damaged.h5");
    let (_, addr) = all.iter().find(|(n, _)| n == "/g/nlef8").unwrap().clone();
    for offset in 0..160usize {
        for value in [0x00u8, 0x01, 0x7f, 0xff] {
            let mut copy = bytes.clone();
            let at = addr as usize + offset;
            if at >= copy.len() {
                continue;
            }
            copy[at] = value;
            std::fs::write(&damaged, &copy).unwrap();
            if let Ok(file) = File::open_in_memory(&damaged, Limits::default()) {
                let _ = file.small_dataset_at(addr);
            }
        }
    }
    let file = File::open_in_memory(&path, Limits::default()).unwrap();
    for addr in [0, 1, 3, bytes.len() as u64 - 4, 1 << 40, u64::MAX] {
        assert!(file.small_dataset_at(addr).is_none(), "{addr}");
    }
    // The image counts against the limits.
    let err = File::open_in_memory(&path, Limits::default().max_alloc(64)).unwrap_err();
    assert_eq!(err.kind(), sciio_core::ErrorKind::LimitExceeded, "{err}");
}
