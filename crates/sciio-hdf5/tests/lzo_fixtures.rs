//! LZO (filter 305): no wheel can read or write it, so the fixtures are made here with the C LZO
//! library itself (liblzo2 2.10 through the `lzo-sys` crate): chunks compressed by
//! `lzo1x_1_compress` and framed as PyTables' H5Zlzo.c frames them (Adler-32 from
//! `lzo_adler32` + decoded length), written into a dataset with h5py's direct chunk write.
//! sciio must read them back — through libhdf5's pipeline (sciio's registered filter) and
//! through the parallel direct-chunk reader.

use sciio_hdf5::File;
use sciio_testkit::{run_python, tempdir};

fn lzo_compress(data: &[u8]) -> Vec<u8> {
    let mut out = vec![0u8; data.len() + data.len() / 16 + 64 + 3 + 8];
    let mut wrk = vec![0u8; lzo_sys::lzo1x::LZO1X_1_MEM_COMPRESS as usize];
    let mut len = out.len();
    unsafe {
        assert_eq!(lzo_sys::lzoconf::lzo_init(), 0);
        let rc = lzo_sys::lzo1x::lzo1x_1_compress(
            data.as_ptr(),
            data.len(),
            out.as_mut_ptr(),
            &mut len,
            wrk.as_mut_ptr().cast(),
        );
        assert_eq!(rc, 0, "lzo1x_1_compress failed");
        let checksum = lzo_sys::lzoconf::lzo_adler32(1, data.as_ptr(), data.len());
        out.truncate(len);
        out.extend_from_slice(&checksum.to_le_bytes());
        out.extend_from_slice(&(data.len() as u32).to_le_bytes());
    }
    out
}

fn shuffle(data: &[u8], size: usize) -> Vec<u8> {
    let n = data.len() / size;
    let mut out = vec![0u8; data.len()];
    for i in 0..n {
        for b in 0..size {
            out[b * n + i] = data[i * size + b];
        }
    }
    out
}

#[test]
fn lzo_chunks_made_by_liblzo2_read_back() {
    let dir = tempdir();
    let n_chunks = 7;
    let chunk = 1000usize;
    let values: Vec<i32> = (0..(n_chunks * chunk) as i32)
        .map(|i| (i / 7) * 3 - (i % 11) * 1000)
        .collect();
    let bytes: Vec<u8> = values.iter().flat_map(|v| v.to_le_bytes()).collect();
    for c in 0..n_chunks {
        let part = &bytes[c * chunk * 4..(c + 1) * chunk * 4];
        std::fs::write(dir.path().join(format!("plain{c}.lzo")), lzo_compress(part)).unwrap();
        std::fs::write(
            dir.path().join(format!("shuf{c}.lzo")),
            lzo_compress(&shuffle(part, 4)),
        )
        .unwrap();
    }
    let path = dir.path().join("lzo.h5");
    let code = "import sys, os, h5py, numpy as np\n\
        d, n, c = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])\n\
        with h5py.File(os.path.join(d, 'lzo.h5'), 'w') as f:\n\
        \x20   for name, shuf in (('plain', False), ('shuf', True)):\n\
        \x20       ds = f.create_dataset(name, shape=(n * c,), dtype='<i4', chunks=(c,), shuffle=shuf,\n\
        \x20                             compression=305, compression_opts=(1, 23, 0), allow_unknown_filter=True)\n\
        \x20       for i in range(n):\n\
        \x20           ds.id.write_direct_chunk((i * c,), open(os.path.join(d, f'{name}{i}.lzo'), 'rb').read())\n";
    run_python(
        code,
        &[
            &dir.path().to_string_lossy(),
            &n_chunks.to_string(),
            &chunk.to_string(),
        ],
    );
    let file = File::open(&path).unwrap();
    for name in ["/plain", "/shuf"] {
        let ds = file.dataset(name).unwrap();
        let (_, _, filters) = ds.storage().unwrap();
        assert_eq!(filters.last().unwrap().id, 305, "{name} is LZO-compressed");
        let via_libhdf5 = ds.read().unwrap();
        assert_eq!(via_libhdf5.bytes, bytes, "{name} via libhdf5's pipeline");
        let parallel = ds.read_rows_parallel(0, (n_chunks * chunk) as u64).unwrap();
        assert_eq!(parallel.bytes, bytes, "{name} via the parallel reader");
        let part = ds.read_rows_parallel(1500, 2100).unwrap();
        assert_eq!(
            part.bytes,
            bytes[1500 * 4..3600 * 4],
            "{name} rows 1500..3600"
        );
    }
}

#[test]
fn lzo_chunk_with_a_bad_checksum_is_a_clean_error() {
    let dir = tempdir();
    let data: Vec<u8> = (0..4000u32).flat_map(|i| (i % 97).to_le_bytes()).collect();
    let mut frame = lzo_compress(&data);
    let at = frame.len() - 8;
    frame[at] ^= 0xFF; // corrupt the Adler-32
    std::fs::write(dir.path().join("bad.lzo"), frame).unwrap();
    let code = "import sys, os, h5py\n\
        d = sys.argv[1]\n\
        with h5py.File(os.path.join(d, 'bad.h5'), 'w') as f:\n\
        \x20   ds = f.create_dataset('x', shape=(4000,), dtype='<u4', chunks=(4000,), compression=305,\n\
        \x20                         compression_opts=(1, 23, 0), allow_unknown_filter=True)\n\
        \x20   ds.id.write_direct_chunk((0,), open(os.path.join(d, 'bad.lzo'), 'rb').read())\n";
    run_python(code, &[&dir.path().to_string_lossy()]);
    let file = File::open(dir.path().join("bad.h5")).unwrap();
    let ds = file.dataset("/x").unwrap();
    let err = ds.read().unwrap_err();
    assert!(err.to_string().contains("/x"), "{err}");
    let err = ds.read_rows_parallel(0, 4000).unwrap_err();
    assert_eq!(err.kind(), sciio_core::ErrorKind::Corrupt, "{err}");
}

/// Chunks as PyTables' H5Zlzo.c writes them for Tables of format < 2.0: the LZO1X stream
/// alone, no checksum or length trailer. libhdf5's pipeline never tells a filter the chunk's
/// size, so sciio's registered filter must find it from the stream itself.
#[test]
fn lzo_chunks_without_trailer_read_through_libhdf5_and_in_parallel() {
    let dir = tempdir();
    let (n_chunks, chunk) = (5usize, 3000usize);
    let values: Vec<f64> = (0..n_chunks * chunk)
        .map(|i| ((i % 113) as f64).sqrt() * if i % 3 == 0 { -1.0 } else { 1.0 })
        .collect();
    let bytes: Vec<u8> = values.iter().flat_map(|v| v.to_le_bytes()).collect();
    for c in 0..n_chunks {
        let mut frame = lzo_compress(&bytes[c * chunk * 8..(c + 1) * chunk * 8]);
        frame.truncate(frame.len() - 8); // drop the Adler-32 + length trailer
        std::fs::write(dir.path().join(format!("c{c}.lzo")), frame).unwrap();
    }
    let code = "import sys, os, h5py\n\
        d, n, c = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])\n\
        with h5py.File(os.path.join(d, 'old.h5'), 'w') as f:\n\
        \x20   ds = f.create_dataset('x', shape=(n * c,), dtype='<f8', chunks=(c,), compression=305,\n\
        \x20                         compression_opts=(1, 23, 0), allow_unknown_filter=True)\n\
        \x20   for i in range(n):\n\
        \x20       ds.id.write_direct_chunk((i * c,), open(os.path.join(d, f'c{i}.lzo'), 'rb').read())\n";
    run_python(
        code,
        &[
            &dir.path().to_string_lossy(),
            &n_chunks.to_string(),
            &chunk.to_string(),
        ],
    );
    let file = File::open(dir.path().join("old.h5")).unwrap();
    let ds = file.dataset("/x").unwrap();
    assert_eq!(ds.read().unwrap().bytes, bytes, "via libhdf5's pipeline");
    let stepped = ds
        .read_slices(Some(&[sciio_hdf5::Slice {
            start: 7,
            count: 1000,
            step: 11,
        }]))
        .unwrap();
    let expect: Vec<u8> = (0..1000)
        .flat_map(|i| values[7 + i * 11].to_le_bytes())
        .collect();
    assert_eq!(stepped.bytes, expect, "stepped, via libhdf5's pipeline");
    let parallel = ds.read_rows_parallel(0, (n_chunks * chunk) as u64).unwrap();
    assert_eq!(parallel.bytes, bytes, "via the parallel reader");
}
