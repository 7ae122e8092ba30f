//! Variable-length attributes whose stored sequence lengths are damaged: sciio refuses them
//! with a Corrupt error at the element's file offset before libhdf5, which would allocate and
//! zero `length × base size` bytes for each element first, reads them. Undamaged ones read as
//! h5py wrote them. Files from h5py with version-1 object headers, version-2 headers
//! (libver latest) and a 512-byte user block (as MAT files have).

use std::path::Path;

use sciio_core::{ErrorKind, Limits};
use sciio_hdf5::{AttrValue, File};
use sciio_testkit::{run_python, tempdir, vlen_descriptor_offsets};

const WRITE: &str = r#"
import sys, h5py, numpy as np
path, libver, userblock = sys.argv[1], sys.argv[2], int(sys.argv[3])
with h5py.File(path, "w", libver=libver, userblock_size=userblock) as f:
    f.attrs["text"] = "hello"
    d = f.create_dataset("d", data=np.arange(3.0))
    seq = np.empty(2, dtype=object)
    seq[0], seq[1] = np.array([1, 2, 3], dtype="<i4"), np.array([4, 5], dtype="<i4")
    d.attrs.create("seq", seq, dtype=h5py.vlen_dtype(np.dtype("<i4")))
"#;

fn write(dir: &Path, libver: &str, userblock: usize) -> std::path::PathBuf {
    let path = dir.join(format!("{libver}_{userblock}.h5"));
    run_python(
        WRITE,
        &[path.to_str().unwrap(), libver, &userblock.to_string()],
    );
    path
}

/// HDF5's metadata checksum (`H5_checksum_lookup3`: Bob Jenkins' lookup3 `hashlittle`,
/// initial value 0).
fn lookup3(k: &[u8]) -> u32 {
    let rot = |x: u32, n: u32| x.rotate_left(n);
    let word = |b: &[u8]| {
        b.iter()
            .rev()
            .fold(0u32, |acc, &x| (acc << 8) | u32::from(x))
    };
    let mut a = 0xdead_beefu32.wrapping_add(k.len() as u32);
    let (mut b, mut c) = (a, a);
    let mut rest = k;
    while rest.len() > 12 {
        a = a.wrapping_add(word(&rest[0..4]));
        b = b.wrapping_add(word(&rest[4..8]));
        c = c.wrapping_add(word(&rest[8..12]));
        a = a.wrapping_sub(c) ^ rot(c, 4);
        c = c.wrapping_add(b);
        b = b.wrapping_sub(a) ^ rot(a, 6);
        a = a.wrapping_add(c);
        c = c.wrapping_sub(b) ^ rot(b, 8);
        b = b.wrapping_add(a);
        a = a.wrapping_sub(c) ^ rot(c, 16);
        c = c.wrapping_add(b);
        b = b.wrapping_sub(a) ^ rot(a, 19);
        a = a.wrapping_add(c);
        c = c.wrapping_sub(b) ^ rot(b, 4);
        b = b.wrapping_add(a);
        rest = &rest[12..];
    }
    if rest.is_empty() {
        return c;
    }
    a = a.wrapping_add(word(&rest[..rest.len().min(4)]));
    if rest.len() > 4 {
        b = b.wrapping_add(word(&rest[4..rest.len().min(8)]));
    }
    if rest.len() > 8 {
        c = c.wrapping_add(word(&rest[8..]));
    }
    c = (c ^ b).wrapping_sub(rot(b, 14));
    a = (a ^ c).wrapping_sub(rot(c, 11));
    b = (b ^ a).wrapping_sub(rot(a, 25));
    c = (c ^ b).wrapping_sub(rot(b, 16));
    a = (a ^ c).wrapping_sub(rot(c, 4));
    b = (b ^ a).wrapping_sub(rot(a, 14));
    (c ^ b).wrapping_sub(rot(b, 24))
}

/// The (start, checksum offset) of the version-2 object header block ("OHDR") holding file
/// offset `at`, if any.
fn ohdr_block(bytes: &[u8], at: usize) -> Option<(usize, usize)> {
    let start = (0..at).rev().find(|&i| bytes[i..].starts_with(b"OHDR"))?;
    let flags = bytes[start + 5];
    let mut pos = start + 6;
    if flags & 0x20 != 0 {
        pos += 16;
    }
    if flags & 0x10 != 0 {
        pos += 4;
    }
    let width = 1usize << (flags & 3);
    let mut size = [0u8; 8];
    size[..width].copy_from_slice(&bytes[pos..pos + width]);
    let end = pos + width + u64::from_le_bytes(size) as usize;
    (at < end).then_some((start, end))
}

/// A copy of `path` with the length at `at` set to `len` (and the object header's checksum
/// recomputed, so that libhdf5 accepts the header as a crafted file's would be).
fn patched(path: &Path, at: usize, len: u32) -> std::path::PathBuf {
    let mut bytes = std::fs::read(path).unwrap();
    let block = ohdr_block(&bytes, at);
    if let Some((start, end)) = block {
        let stored = u32::from_le_bytes(bytes[end..end + 4].try_into().unwrap());
        assert_eq!(
            lookup3(&bytes[start..end]),
            stored,
            "checksum of the header"
        );
    }
    bytes[at..at + 4].copy_from_slice(&len.to_le_bytes());
    if let Some((start, end)) = block {
        let sum = lookup3(&bytes[start..end]);
        bytes[end..end + 4].copy_from_slice(&sum.to_le_bytes());
    }
    let out = path.with_extension(format!("bad{at}.h5"));
    std::fs::write(&out, bytes).unwrap();
    out
}

#[test]
fn damaged_vlen_attribute_lengths_are_refused_before_libhdf5_reads_them() {
    let dir = tempdir();
    for (libver, userblock) in [("earliest", 0), ("latest", 0), ("earliest", 512)] {
        let path = write(dir.path(), libver, userblock);
        let file = File::open(&path).unwrap();
        // Undamaged: the values h5py wrote.
        match file.root().unwrap().attr("text").unwrap().unwrap().value {
            AttrValue::Vlen(v) => assert_eq!(v.items, vec![b"hello".to_vec()]),
            other => panic!("{other:?}"),
        }
        match file
            .dataset("/d")
            .unwrap()
            .attr("seq")
            .unwrap()
            .unwrap()
            .value
        {
            AttrValue::Vlen(v) => assert_eq!(
                v.items,
                vec![
                    [1i32, 2, 3]
                        .iter()
                        .flat_map(|x| x.to_le_bytes())
                        .collect::<Vec<_>>(),
                    [4i32, 5].iter().flat_map(|x| x.to_le_bytes()).collect(),
                ]
            ),
            other => panic!("{other:?}"),
        }
        drop(file);
        let bytes = std::fs::read(&path).unwrap();
        // "hello" (5 bytes) on the root group; the second sequence (2 values) on /d.
        for (len, node, attr) in [(5u32, "/", "text"), (2, "/d", "seq")] {
            let found = vlen_descriptor_offsets(&bytes, userblock, len);
            assert_eq!(
                found.len(),
                1,
                "{libver}/{userblock}: {attr} descriptor {found:?}"
            );
            // Version-2 headers are checksummed (and re-checksummed by `patched`).
            assert_eq!(
                ohdr_block(&bytes, found[0]).is_some(),
                libver == "latest",
                "{libver}: header kind"
            );
            let bad = patched(&path, found[0], 0xFFFF_FFF0);
            let file = File::open(&bad).unwrap();
            let err = if node == "/" {
                file.root().unwrap().attr(attr).unwrap_err()
            } else {
                file.dataset(node).unwrap().attr(attr).unwrap_err()
            };
            assert_eq!(
                err.kind(),
                ErrorKind::Corrupt,
                "{libver}/{userblock}: {err}"
            );
            assert_eq!(err.location().offset, Some(found[0] as u64), "{err}");
            let text = err.to_string();
            assert!(
                text.contains(attr) && text.contains("more than the file's"),
                "{text}"
            );
            // A length the file can hold but the limits cannot.
            let big = patched(&path, found[0], 1000);
            let tight = Limits::default().max_alloc(512);
            let file = File::open_with_limits(&big, tight).unwrap();
            let err = if node == "/" {
                file.root().unwrap().attr(attr).unwrap_err()
            } else {
                file.dataset(node).unwrap().attr(attr).unwrap_err()
            };
            assert_eq!(err.kind(), ErrorKind::LimitExceeded, "{err}");
        }
    }
}

/// Writes vlen datasets (h5py: contiguous, chunked, gzip-chunked; PyTables: a VLArray with
/// shuffle + zlib) and, in a copy, damages the length of element 1 in the stored data: for
/// chunks by reading chunk 0 raw, undoing its filters, patching and writing it back.
const WRITE_DATASETS: &str = r#"
import sys, shutil, zlib, h5py, numpy as np, tables
good, bad = sys.argv[1], sys.argv[2]
seqs = [np.arange(n, dtype="<i4") for n in (3, 2, 4, 1)]
with h5py.File(good, "w") as f:
    dt = h5py.vlen_dtype(np.dtype("<i4"))
    for name, kw in [("contiguous", {}), ("chunked", {"chunks": (2,)}),
                     ("gzip", {"chunks": (2,), "compression": "gzip"})]:
        d = f.create_dataset(name, (4,), dtype=dt, **kw)
        for i, s in enumerate(seqs):
            d[i] = s
    f.create_dataset("text", data=["ab", "cde", "f"], dtype=h5py.string_dtype(), chunks=(3,))
with tables.open_file(good, "a") as t:
    vl = t.create_vlarray("/", "vlarray", tables.Int32Atom(), filters=tables.Filters(5, "zlib", shuffle=True))
    for s in seqs:
        vl.append(s)
shutil.copy(good, bad)
with h5py.File(bad, "r+") as f:
    for name in ["contiguous", "chunked", "gzip", "text", "vlarray"]:
        d = f[name]
        if d.chunks is None:
            off = d.id.get_offset() + 16  # element 1
            with open(bad, "r+b") as raw:
                raw.seek(off); raw.write((0xFFFFFFF0).to_bytes(4, "little"))
            continue
        mask, data = d.id.read_direct_chunk((0,))
        plist = d.id.get_create_plist()
        filters = [plist.get_filter(i)[0] for i in range(plist.get_nfilters())]
        gz = [i for i, fid in enumerate(filters) if fid == h5py.h5z.FILTER_DEFLATE and not mask & (1 << i)]
        applied = [fid for i, fid in enumerate(filters) if not mask & (1 << i)]
        assert set(applied) <= {h5py.h5z.FILTER_DEFLATE}, (name, filters, mask)
        if gz:
            data = zlib.decompress(data)
        data = bytearray(data)
        data[16:20] = (0xFFFFFFF0).to_bytes(4, "little")
        if gz:
            data = zlib.compress(bytes(data))
        d.id.write_direct_chunk((0,), bytes(data), filter_mask=mask)
        print(name, "chunk mask", mask, "filters", filters)
"#;

#[test]
fn damaged_vlen_dataset_lengths_are_refused_before_libhdf5_reads_them() {
    let dir = tempdir();
    let good = dir.path().join("good.h5");
    let bad = dir.path().join("bad.h5");
    let out = run_python(
        WRITE_DATASETS,
        &[good.to_str().unwrap(), bad.to_str().unwrap()],
    );
    assert!(out.contains("vlarray chunk mask"), "{out}");
    let (good, bad) = (File::open(&good).unwrap(), File::open(&bad).unwrap());
    for name in ["contiguous", "chunked", "gzip", "text", "vlarray"] {
        let path = format!("/{name}");
        let rows = good.dataset(&path).unwrap().read_vlen(None).unwrap();
        assert!(rows.items.len() >= 3, "{name}");
        let err = bad.dataset(&path).unwrap().read_vlen(None).unwrap_err();
        assert_eq!(err.kind(), ErrorKind::Corrupt, "{name}: {err}");
        let text = err.to_string();
        assert!(
            text.contains(&path)
                && text.contains("row 1:")
                && text.contains("more than the file's"),
            "{name}: {text}"
        );
        // A selection that avoids the damaged row still reads.
        let tail = sciio_hdf5::Slice {
            start: 2,
            count: 1,
            step: 1,
        };
        let ok = bad
            .dataset(&path)
            .unwrap()
            .read_vlen(Some(&[tail]))
            .unwrap();
        assert_eq!(ok.items.len(), 1, "{name}");
    }
}
