//! PyTables' `time64`: stored in an 8-byte H5T_TIME whose bits are an int64 holding signed
//! seconds in the high 32 bits and signed microseconds in the low 32 (PyTables' `timeval32`,
//! `conv_float64_timeval32` in typeconv.c), read
//! by PyTables as float64 seconds. sciio converts the same way, in place, keeping the byte
//! order of the file (the numpy descr of the type says `f8`).

use sciio_hdf5::{ByteOrder, H5Type, RawData};

/// Byte offsets of every time64 value inside one element of `ty`, with their byte order.
fn time64_offsets(ty: &H5Type, base: usize, out: &mut Vec<(usize, ByteOrder)>) {
    match ty {
        H5Type::Time { size: 8, order } => out.push((base, *order)),
        H5Type::Compound { fields, .. } => {
            for f in fields {
                time64_offsets(&f.ty, base + f.offset, out);
            }
        }
        H5Type::Array { base: inner, dims } => {
            let n: usize = dims.iter().product();
            let step = inner.size();
            for i in 0..n {
                time64_offsets(inner, base + i * step, out);
            }
        }
        _ => {}
    }
}

/// Converts every time64 value of `data` from timeval32 bits to float64 seconds.
pub(crate) fn convert_time64(data: &mut RawData) {
    let mut offsets = Vec::new();
    time64_offsets(&data.ty, 0, &mut offsets);
    if offsets.is_empty() {
        return;
    }
    let size = data.ty.size().max(1);
    for elem in data.bytes.chunks_exact_mut(size) {
        for &(at, order) in &offsets {
            let Some(cell) = elem.get_mut(at..at + 8) else {
                continue;
            };
            let mut w = [0u8; 8];
            w.copy_from_slice(cell);
            let bits = if order == ByteOrder::Big {
                i64::from_be_bytes(w)
            } else {
                i64::from_le_bytes(w)
            };
            // Both halves are signed (PyTables computes `1e-6 * (int)tv + (tv >> 32)`): a time
            // before 1970 has negative seconds and negative microseconds.
            let seconds = 1e-6 * f64::from(bits as i32) + (bits >> 32) as f64;
            let out = if order == ByteOrder::Big {
                seconds.to_be_bytes()
            } else {
                seconds.to_le_bytes()
            };
            cell.copy_from_slice(&out);
        }
    }
}
