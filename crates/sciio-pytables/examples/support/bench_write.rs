//! The `write` mode of the PyTables bench example (python/bench_pytables_write.py): times
//! writing a table from numpy-made rows, or a float32 EArray, and prints JSON.
//!
//! usage: bench write table ROWS.bin OUT.h5 BATCH_ROWS FILTERS EXPECTED_ROWS
//!        bench write earray OUT.h5 MIB APPEND_MIB COLS FILTERS

use std::time::Instant;

use sciio_hdf5::{ByteOrder, CharSet, Field, H5Type};
use sciio_pytables::write::{Filters, PtWriter};

type Res = Result<(), Box<dyn std::error::Error>>;

/// The bench table's row: i8 int64, f8 float64, f4 float32, s16 S16, b bool (packed).
fn row_type() -> H5Type {
    let le = ByteOrder::Little;
    H5Type::Compound {
        size: 37,
        fields: vec![
            Field {
                name: "i8".into(),
                offset: 0,
                ty: H5Type::Int {
                    size: 8,
                    signed: true,
                    order: le,
                },
            },
            Field {
                name: "f8".into(),
                offset: 8,
                ty: H5Type::Float {
                    size: 8,
                    precision: 64,
                    order: le,
                },
            },
            Field {
                name: "f4".into(),
                offset: 16,
                ty: H5Type::Float {
                    size: 4,
                    precision: 32,
                    order: le,
                },
            },
            Field {
                name: "s16".into(),
                offset: 20,
                ty: H5Type::FixedString {
                    size: 16,
                    charset: CharSet::Ascii,
                },
            },
            Field {
                name: "b".into(),
                offset: 36,
                ty: H5Type::Bitfield {
                    size: 1,
                    precision: 8,
                    order: le,
                },
            },
        ],
    }
}

pub fn main(args: &[String]) -> Res {
    match args.first().map(String::as_str) {
        Some("table") if args.len() >= 6 => table(
            &args[1],
            &args[2],
            args[3].parse()?,
            &args[4],
            args[5].parse()?,
        ),
        Some("earray") if args.len() >= 6 => earray(
            &args[1],
            args[2].parse()?,
            args[3].parse()?,
            args[4].parse()?,
            &args[5],
        ),
        _ => {
            eprintln!("usage: bench write table ROWS.bin OUT.h5 BATCH FILTERS EXPECTED | bench write earray OUT.h5 MIB APPEND_MIB COLS FILTERS");
            std::process::exit(2);
        }
    }
}

fn report(case: &str, secs: f64, out: &str) {
    let size = std::fs::metadata(out).map(|m| m.len()).unwrap_or(0);
    println!(
        "{{\"case\": {case:?}, \"seconds\": {secs:.6}, \"file_bytes\": {size}, \"threads\": {}}}",
        rayon::current_num_threads()
    );
}

fn table(input: &str, out: &str, batch: usize, filters: &str, expected: u64) -> Res {
    let data = std::fs::read(input)?;
    let row = row_type();
    let start = Instant::now();
    let file = PtWriter::create(out)?;
    let mut t = file
        .root()?
        .create_table("table", row.clone())
        .filters(Filters::parse(filters)?)
        .expected_rows(expected)
        .create()?;
    for b in data.chunks(batch * row.size()) {
        t.append(b)?;
    }
    drop(t);
    file.finish()?;
    report("table", start.elapsed().as_secs_f64(), out);
    Ok(())
}

fn earray(out: &str, mib: u64, append_mib: u64, cols: u64, filters: &str) -> Res {
    let f4 = H5Type::Float {
        size: 4,
        precision: 32,
        order: ByteOrder::Little,
    };
    let rows = mib * (1 << 20) / 4 / cols;
    let block = (append_mib * (1 << 20) / 4 / cols).max(1);
    // The blocks are made before timing, as the Python side does: the same values as its
    // np.arange(start * cols, (start + m) * cols).astype(float32), in the same kind of memory
    // (numpy advises huge pages for large arrays, as sciio's NdArray does; the kernel copies a
    // page-cache write from such memory with fewer TLB misses than from a plain Vec).
    let mut blocks = Vec::new();
    let mut r = 0;
    while r < rows {
        let m = block.min(rows - r);
        let mut a = sciio_core::NdArray::zeroed(
            sciio_core::DType::from_typestr("<f4")?,
            &[(m * cols) as usize],
            sciio_core::Order::C,
        )?;
        for (x, v) in a.view_mut::<f32>()?.iter_mut().zip(r * cols..) {
            *x = v as f32;
        }
        blocks.push(a);
        r += m;
    }
    let start = Instant::now();
    let file = PtWriter::create(out)?;
    let mut e = file
        .root()?
        .create_earray("earray", f4, vec![cols])
        .filters(Filters::parse(filters)?)
        .create()?;
    for b in &blocks {
        e.append(b.as_bytes())?;
    }
    drop(e);
    file.finish()?;
    report("earray", start.elapsed().as_secs_f64(), out);
    Ok(())
}
