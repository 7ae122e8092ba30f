//! Blosc2 chunks of n-d CArrays/EArrays are B2ND arrays, as PyTables 3.11's `blosc2` filter
//! writes them (hdf5-blosc2: `b2nd_from_cbuffer` + `b2nd_to_cframe`, block shape derived from
//! cd_values[1]); 1-d chunks stay plain super-chunk frames. Each dataset is written by sciio
//! and by PyTables with the same chunk shape and filters; python-blosc2 opens every chunk of
//! both files and the B2ND metadata (shape, chunk shape, block shape), the filter's cd_values
//! and the decoded bytes must be equal; PyTables reads sciio's values.

use sciio_hdf5::{ByteOrder, H5Type};
use sciio_pytables::write::{Filters, PtWriter};

struct Case {
    name: &'static str,
    atom: H5Type,
    shape: Vec<u64>,
    chunk: Vec<u64>,
    filters: &'static str,
    /// PyTables' atom and Filters arguments.
    py_atom: &'static str,
    py_filters: &'static str,
    earray: bool,
}

fn float(size: usize) -> H5Type {
    H5Type::Float {
        size,
        precision: 8 * size,
        order: ByteOrder::Little,
    }
}

fn cases() -> Vec<Case> {
    let i2 = H5Type::Int {
        size: 2,
        signed: true,
        order: ByteOrder::Little,
    };
    vec![
        Case {
            name: "f4_2d_lz4",
            atom: float(4),
            shape: vec![50, 70],
            chunk: vec![16, 32],
            filters: "blosc2:lz4:5",
            py_atom: "tb.Float32Atom()",
            py_filters: "tb.Filters(5, 'blosc2:lz4', shuffle=True)",
            earray: false,
        },
        // Chunks of 512 KiB: c-blosc2's block is smaller than the chunk, so the block shape
        // derivation (compute_b2nd_block_shape) is exercised.
        Case {
            name: "f4_2d_big_chunks",
            atom: float(4),
            shape: vec![300, 600],
            chunk: vec![256, 512],
            filters: "blosc2:lz4:5",
            py_atom: "tb.Float32Atom()",
            py_filters: "tb.Filters(5, 'blosc2:lz4', shuffle=True)",
            earray: false,
        },
        Case {
            name: "i2_3d_zstd_bitshuffle",
            atom: i2.clone(),
            shape: vec![9, 20, 33],
            chunk: vec![4, 8, 16],
            filters: "bitshuffle,blosc2:zstd:3",
            py_atom: "tb.Int16Atom()",
            py_filters: "tb.Filters(3, 'blosc2:zstd', shuffle=False, bitshuffle=True)",
            earray: false,
        },
        Case {
            name: "f8_2d_blosc2_earray",
            atom: float(8),
            shape: vec![37, 12],
            chunk: vec![10, 12],
            filters: "blosc2:9",
            py_atom: "tb.Float64Atom()",
            py_filters: "tb.Filters(9, 'blosc2')",
            earray: true,
        },
        Case {
            name: "i2_1d_plain_frame",
            atom: i2,
            shape: vec![1000],
            chunk: vec![256],
            filters: "blosc2:lz4:5",
            py_atom: "tb.Int16Atom()",
            py_filters: "tb.Filters(5, 'blosc2:lz4')",
            earray: false,
        },
    ]
}

/// Element `i` of every case: small integers, so float and int16 atoms hold them exactly.
fn data(c: &Case) -> Vec<u8> {
    let n: u64 = c.shape.iter().product();
    (0..n)
        .flat_map(|i| {
            let v = ((i * 7) % 1000) as i64 - 300;
            match c.atom.size() {
                2 => (v as i16).to_le_bytes().to_vec(),
                4 => (v as f32).to_le_bytes().to_vec(),
                _ => (v as f64).to_le_bytes().to_vec(),
            }
        })
        .collect()
}

fn write_sciio(path: &std::path::Path) {
    let file = PtWriter::create(path).unwrap();
    let root = file.root().unwrap();
    for c in cases() {
        let filters = Filters::parse(c.filters).unwrap();
        if c.earray {
            let mut e = root
                .create_earray(c.name, c.atom.clone(), c.shape[1..].to_vec())
                .filters(filters)
                .chunk_shape(c.chunk.clone())
                .create()
                .unwrap();
            let bytes = data(&c);
            let half = (c.shape[0] as usize / 2) * bytes.len() / c.shape[0] as usize;
            e.append(&bytes[..half]).unwrap();
            e.append(&bytes[half..]).unwrap();
        } else {
            root.create_carray(c.name, c.atom.clone(), c.shape.clone())
                .filters(filters)
                .chunk_shape(c.chunk.clone())
                .write(&data(&c))
                .unwrap();
        }
    }
    file.finish().unwrap();
}

const PYTABLES_TWIN: &str = r#"
import sys, numpy as np, tables as tb
cases = eval(sys.argv[2])
with tb.open_file(sys.argv[1], "w") as f:
    for name, atom, shape, chunk, filters, earray in cases:
        atom, filters = eval(atom), eval(filters)
        n = int(np.prod(shape))
        v = (((np.arange(n, dtype=np.int64) * 7) % 1000) - 300).astype(atom.dtype).reshape(shape)
        if earray:
            e = f.create_earray("/", name, atom, (0,) + tuple(shape[1:]), filters=filters, chunkshape=tuple(chunk))
            e.append(v[: shape[0] // 2])
            e.append(v[shape[0] // 2 :])
        else:
            f.create_carray("/", name, atom, tuple(shape), filters=filters, chunkshape=tuple(chunk), obj=v)
"#;

const COMPARE: &str = r#"
import sys, numpy as np, h5py, hdf5plugin, blosc2, tables as tb
ours, theirs = h5py.File(sys.argv[1], "r"), h5py.File(sys.argv[2], "r")

def chunks(d):
    out = []
    for i in range(d.id.get_num_chunks()):
        info = d.id.get_chunk_info(i)
        out.append((info.chunk_offset, d.id.read_direct_chunk(info.chunk_offset)[1]))
    return sorted(out)

def describe(frame, typesize):
    schunk = blosc2.schunk_from_cframe(frame)
    if "b2nd" in schunk.meta:
        a = blosc2.ndarray_from_cframe(frame)
        return ("b2nd", a.shape, a.chunks, a.blocks, a[...].tobytes())
    return ("frame", schunk.nchunks, schunk.chunksize, schunk.typesize, schunk.decompress_chunk(0))

for name in sorted(theirs):
    a, b = ours[name], theirs[name]
    fa = a.id.get_create_plist().get_filter(0)
    fb = b.id.get_create_plist().get_filter(0)
    assert fa[0] == fb[0] == 32026 and fa[2] == fb[2], (name, fa, fb)
    assert a.chunks == b.chunks and a.shape == b.shape, (name, a.chunks, b.chunks)
    ca, cb = chunks(a), chunks(b)
    assert [o for o, _ in ca] == [o for o, _ in cb], name
    for (off, x), (_, y) in zip(ca, cb):
        dx, dy = describe(x, a.dtype.itemsize), describe(y, b.dtype.itemsize)
        assert dx == dy, (name, off, dx[:4], dy[:4])
    print(name, describe(ca[0][1], a.dtype.itemsize)[:4])
    assert np.array_equal(a[...], b[...]), name
with tb.open_file(sys.argv[1]) as f, tb.open_file(sys.argv[2]) as g:
    for node in g.walk_nodes("/", "Leaf"):
        mine = f.get_node(node._v_pathname)
        assert type(mine) is type(node) and mine.filters == node.filters, (mine, node)
        assert np.array_equal(mine.read(), node.read()), node._v_pathname
print("OK")
"#;

#[test]
fn nd_blosc2_chunks_are_b2nd_arrays_like_pytables() {
    let dir = sciio_testkit::tempdir();
    let ours = dir.path().join("sciio.h5");
    let theirs = dir.path().join("pytables.h5");
    write_sciio(&ours);
    let spec: Vec<String> = cases()
        .iter()
        .map(|c| {
            format!(
                "({:?}, {:?}, {:?}, {:?}, {:?}, {})",
                c.name,
                c.py_atom,
                c.shape,
                c.chunk,
                c.py_filters,
                if c.earray { "True" } else { "False" }
            )
        })
        .collect();
    let spec = format!("[{}]", spec.join(", "));
    sciio_testkit::run_python(PYTABLES_TWIN, &[theirs.to_str().unwrap(), &spec]);
    let out =
        sciio_testkit::run_python(COMPARE, &[ours.to_str().unwrap(), theirs.to_str().unwrap()]);
    assert!(out.trim().ends_with("OK"), "{out}");
    // The n-d cases are B2ND arrays, the 1-d one a plain frame (so the check above compared
    // what it should).
    assert_eq!(out.matches("('b2nd',").count(), 4, "{out}");
    assert!(
        out.contains("f4_2d_big_chunks ('b2nd', (256, 512), (256, 512), (")
            && !out.contains("(256, 512), (256, 512), (256, 512)"),
        "the big chunks should have smaller blocks: {out}"
    );
    assert_eq!(out.matches("('frame',").count(), 1, "{out}");
}
