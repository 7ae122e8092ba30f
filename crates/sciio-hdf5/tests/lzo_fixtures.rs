//! LZO (filter 305): no wheel can read or write it, so the fixtures are made here with the C LZO
//! library itself (liblzo2 2.10 through the `lzo-sys` crate): chunks compressed by
//! `lzo1x_1_compress` and framed as PyTables' H5Zlzo.c frames them, written into a dataset with
//! h5py's direct chunk write. H5Zlzo.c has been built with `#undef CHECKSUM` since PyTables 0.8
//! (January 2004): a chunk is the LZO1X stream alone. Before (from July 2003) the stream was
//! followed by the Adler-32 of the decoded bytes (`lzo_adler32`) and their length, except for
//! Tables of format < 2.0. sciio must read both back — through libhdf5's pipeline (sciio's
//! registered filter) and through the parallel direct-chunk reader — and write the first.

use sciio_hdf5::File;
use sciio_testkit::{run_python, tempdir};

/// liblzo2's `lzo1x_1_compress` (what PyTables' H5Zlzo.c calls) with the pre-0.8 trailer.
fn lzo_compress(data: &[u8]) -> Vec<u8> {
    let mut out = lzo1x_1(data);
    // SAFETY: a valid slice pointer and its length.
    let checksum = unsafe { lzo_sys::lzoconf::lzo_adler32(1, data.as_ptr(), data.len()) };
    out.extend_from_slice(&checksum.to_le_bytes());
    out.extend_from_slice(&(data.len() as u32).to_le_bytes());
    out
}

/// liblzo2's `lzo1x_1_compress` stream alone.
fn lzo1x_1(data: &[u8]) -> Vec<u8> {
    let mut out = vec![0u8; data.len() + data.len() / 16 + 64 + 3];
    let mut wrk = vec![0u8; lzo_sys::lzo1x::LZO1X_1_MEM_COMPRESS as usize];
    let mut len = out.len();
    // SAFETY: valid input, output (with its length in `len`) and work-memory buffers of the sizes
    // liblzo2 asks for.
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
        out.truncate(len);
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

/// Chunks as PyTables' H5Zlzo.c writes them since 0.8 (and before for Tables of format < 2.0):
/// the LZO1X stream alone, no checksum or length trailer. libhdf5's pipeline never tells a
/// filter the chunk's size, so sciio's registered filter must find it from the stream itself.
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

/// `lzo1x_decompress_safe` (liblzo2) over the whole of `frame`, as PyTables' H5Zlzo.c calls
/// it, into a buffer of `capacity` bytes: its status and the decoded bytes.
fn lzo_decompress_c(frame: &[u8], capacity: usize) -> (i32, Vec<u8>) {
    let mut out = vec![0u8; capacity];
    let mut len = out.len();
    // SAFETY: valid input and output buffers with their lengths; lzo1x_decompress_safe needs no
    // work memory.
    let rc = unsafe {
        assert_eq!(lzo_sys::lzoconf::lzo_init(), 0);
        lzo_sys::lzo1x::lzo1x_decompress_safe(
            frame.as_ptr(),
            frame.len(),
            out.as_mut_ptr(),
            &mut len,
            std::ptr::null_mut(),
        )
    };
    out.truncate(len);
    (rc, out)
}

fn unshuffle(data: &[u8], size: usize) -> Vec<u8> {
    let n = data.len() / size;
    let mut out = vec![0u8; data.len()];
    for i in 0..n {
        for b in 0..size {
            out[i * size + b] = data[b * n + i];
        }
    }
    out
}

/// LZO chunks *written* by sciio, read back raw by h5py (`read_direct_chunk`) and decoded by
/// liblzo2 exactly as PyTables' H5Zlzo.c decodes them. Since PyTables 0.8 (2004) H5Zlzo.c is
/// built with `#undef CHECKSUM`: a chunk is the `lzo1x_1_compress` stream alone, decoded by one
/// `lzo1x_decompress_safe` over all its bytes, which must return `LZO_E_OK` (a trailer after the
/// stream gives `LZO_E_INPUT_NOT_CONSUMED`, which H5Zlzo.c fails on). The filter is optional
/// and fails when the stream is not smaller than the chunk (libhdf5 then stores the chunk
/// unfiltered), so the values here compress. Pipelines as sciio-pytables builds them for
/// `Filters::parse("lzo:1")` (shuffle, then LZO with [level, VERSION * 10, object tag]).
#[test]
fn lzo_chunks_written_by_sciio_decode_with_liblzo2_as_pytables_reads_them() {
    use sciio_hdf5::filters::id;
    use sciio_hdf5::write::{DatasetSpec, FileBuilder, FilterStage};
    use sciio_hdf5::{ByteOrder, H5Type};

    let dir = tempdir();
    let (chunk, n_chunks) = (3000usize, 6usize);
    let n = (n_chunks - 1) * chunk + 1234; // the last chunk is partial
    let mut state = 0x2545_f491u32;
    let values: Vec<i32> = (0..n)
        .map(|i| {
            state = state.wrapping_mul(1_664_525).wrapping_add(1_013_904_223);
            let i = i as i32;
            match (i / 500) % 4 {
                0 => (i / 9) * 1_000_003 - 70_000_000, // steps of large values
                1 => (state >> 24) as i32 - 128,       // small noise around 0
                2 => -(i % 17) * 65_537 + (i / 100),   // negative sawtooth
                _ => i32::MIN + (i % 5) * (state >> 28) as i32, // near the minimum
            }
        })
        .collect();
    let bytes: Vec<u8> = values.iter().flat_map(|v| v.to_le_bytes()).collect();
    let i4 = H5Type::Int {
        size: 4,
        signed: true,
        order: ByteOrder::Little,
    };
    // Filters::pipeline: Lzo => [complevel, VERSION "1.1" * 10, tag CArray 4 / EArray 2].
    let lzo = |tag: u32| FilterStage {
        id: id::LZO,
        cd_values: vec![1, 11, tag],
        optional: true,
    };
    let path = dir.path().join("sciio_lzo.h5");
    let file = FileBuilder::new().create(&path).unwrap();
    let root = file.root().unwrap();
    let plain = DatasetSpec::chunked(
        i4.clone(),
        vec![n as u64],
        vec![Some(n as u64)],
        vec![chunk as u64],
    )
    .filters(vec![lzo(4)]);
    let shuf = DatasetSpec::chunked(i4, vec![n as u64], vec![None], vec![chunk as u64])
        .filters(vec![FilterStage::shuffle(4), lzo(2)]);
    root.write_dataset("plain", &plain, &bytes).unwrap();
    root.write_dataset("shuf", &shuf, &bytes).unwrap();
    drop(root);
    file.close().unwrap();

    let code = "import sys, os, h5py\n\
        d, c = sys.argv[1], int(sys.argv[2])\n\
        with h5py.File(os.path.join(d, 'sciio_lzo.h5'), 'r') as f:\n\
        \x20   for name in ('plain', 'shuf'):\n\
        \x20       ds = f[name]\n\
        \x20       dcpl = ds.id.get_create_plist()\n\
        \x20       for i in range(dcpl.get_nfilters()):\n\
        \x20           fid, flags, cd, fname = dcpl.get_filter(i)\n\
        \x20           print(name, 'filter', fid, flags, ','.join(map(str, cd)), fname.decode())\n\
        \x20       for k in range(ds.id.get_num_chunks()):\n\
        \x20           off = ds.id.get_chunk_info(k).chunk_offset\n\
        \x20           mask, raw = ds.id.read_direct_chunk(off)\n\
        \x20           open(os.path.join(d, f'{name}{off[0] // c}.lzo'), 'wb').write(raw)\n\
        \x20           print(name, 'chunk', off[0], mask, len(raw))\n";
    let out = run_python(code, &[&dir.path().to_string_lossy(), &chunk.to_string()]);
    let lines: Vec<Vec<&str>> = out.lines().map(|l| l.split(' ').collect()).collect();

    let chunk_bytes = chunk * 4;
    // Edge chunks are padded with the fill value (0), as libhdf5 pads them.
    let mut padded = bytes.clone();
    padded.resize(n_chunks * chunk_bytes, 0);
    // (id, flags: 1 = H5Z_FLAG_OPTIONAL, cd_values, the name PyTables recognises).
    let lzo_filter = |tag: &'static str| vec!["305", "1", tag, "lzo"];
    for (name, pipeline) in [
        ("plain", vec![lzo_filter("1,11,4")]),
        (
            "shuf",
            vec![vec!["2", "1", "4", "shuffle"], lzo_filter("1,11,2")],
        ),
    ] {
        let rows = |kind: &str| -> Vec<Vec<&str>> {
            let mine = lines.iter().filter(|l| l[0] == name && l[1] == kind);
            mine.map(|l| l[2..].to_vec()).collect()
        };
        assert_eq!(rows("filter"), pipeline, "{name}: pipeline\n{out}");
        let chunks = rows("chunk");
        let offsets: Vec<String> = chunks.iter().map(|l| l[0].to_string()).collect();
        let expect: Vec<String> = (0..n_chunks).map(|k| (k * chunk).to_string()).collect();
        assert_eq!(offsets, expect, "{name}: chunk count and offsets\n{out}");
        for (k, l) in chunks.iter().enumerate() {
            assert_eq!(l[1], "0", "{name} chunk {k}: every filter applied (mask)");
            let frame = std::fs::read(dir.path().join(format!("{name}{k}.lzo"))).unwrap();
            assert_eq!(l[2], frame.len().to_string());
            assert!(
                frame.len() < chunk_bytes,
                "{name} chunk {k}: {} bytes, H5Zlzo.c would store it unfiltered",
                frame.len()
            );
            // sciio's encoder (lzokay, MIT) is not liblzo2's lzo1x_1_compress: the stream differs
            // but must be as compact as the reference's within 10 %, and decode (below).
            let input = &padded[k * chunk_bytes..(k + 1) * chunk_bytes];
            let input = if name == "shuf" {
                shuffle(input, 4)
            } else {
                input.to_vec()
            };
            let reference = lzo1x_1(&input).len();
            assert!(
                frame.len() * 10 <= reference * 11,
                "{name} chunk {k}: {} bytes against lzo1x_1_compress's {reference}",
                frame.len()
            );
            // The LZO1X stream runs to the last byte: its end-of-stream marker (M4 with
            // distance 0) is the frame's end; no Adler-32/length trailer follows.
            assert_eq!(frame[frame.len() - 3..], [0x11, 0, 0], "{name} chunk {k}");
            // Room for twice the chunk: a stream decoding to more would show here.
            let (rc, decoded) = lzo_decompress_c(&frame, 2 * chunk_bytes);
            assert_eq!(
                rc,
                lzo_sys::lzoconf::LZO_E_OK,
                "{name} chunk {k}: lzo1x_decompress_safe"
            );
            assert_eq!(
                decoded.len(),
                chunk_bytes,
                "{name} chunk {k}: decoded length"
            );
            let plain = if name == "shuf" {
                unshuffle(&decoded, 4)
            } else {
                decoded.clone()
            };
            assert!(
                plain == padded[k * chunk_bytes..(k + 1) * chunk_bytes],
                "{name} chunk {k}: decoded values differ from those written"
            );
            // The frame of PyTables before 0.8 (CHECKSUM defined: Adler-32 + length after the
            // stream) is what today's H5Zlzo.c cannot read: liblzo2 reports unread input.
            let mut old = frame.clone();
            // SAFETY: a valid slice pointer and its length.
            let sum = unsafe { lzo_sys::lzoconf::lzo_adler32(1, decoded.as_ptr(), decoded.len()) };
            old.extend_from_slice(&sum.to_le_bytes());
            old.extend_from_slice(&(chunk_bytes as u32).to_le_bytes());
            assert_eq!(
                lzo_decompress_c(&old, 2 * chunk_bytes).0,
                lzo_sys::lzoconf::LZO_E_INPUT_NOT_CONSUMED,
                "{name} chunk {k}"
            );
        }
        let ds = File::open(&path)
            .unwrap()
            .dataset(&format!("/{name}"))
            .unwrap();
        assert_eq!(ds.read().unwrap().bytes, bytes, "{name} read back by sciio");
    }
}
