//! `sciio cat` of a sparse matrix: a group holding `scipy.sparse.save_npz`'s members (a MATLAB
//! sparse variable, a `save_npz` file, or a whole-file `.npz` member group), printed as MATLAB
//! prints one — `(row,col)  value`, 1-based, column by column — or, with `--dense`, as the
//! dense numpy array.

use sciio::{Error, File, NdArray, Node, NodeKind, Order, Result};

/// Largest dense matrix `--dense` prints (elements).
const MAX_DENSE: usize = 1 << 20;

/// Whether `node` holds `save_npz`'s members.
pub fn is_sparse(node: &Node) -> bool {
    let NodeKind::Group(children) = &node.kind else {
        return false;
    };
    let has = |n: &str| {
        children
            .iter()
            .any(|c| c.name == n && c.array_info().is_some())
    };
    has("format") && has("shape") && has("data") && (has("indptr") || has("row"))
}

fn member(file: &mut File, base: &str, name: &str) -> Result<NdArray> {
    let path = format!("{}/{name}", base.trim_end_matches('/'));
    file.read_array(&path)
}

/// Integers of any width (native order after `to_native`).
fn ints(a: &NdArray, what: &str) -> Result<Vec<u64>> {
    let a = a.to_native().to_order(Order::C);
    let kind = a.dtype().as_scalar().map(|s| s.kind);
    let size = a.dtype().itemsize();
    let signed = match kind {
        Some(sciio::core::ScalarKind::Int(_)) => true,
        Some(sciio::core::ScalarKind::UInt(_)) => false,
        _ => return Err(Error::format(format!("sparse {what} are not integers"))),
    };
    a.as_bytes()
        .chunks_exact(size.max(1))
        .map(|c| {
            let mut b = [0u8; 8];
            let ok = size <= 8;
            if ok {
                if cfg!(target_endian = "big") {
                    for (i, &x) in c.iter().rev().enumerate() {
                        b[i] = x;
                    }
                } else {
                    b[..size].copy_from_slice(c);
                }
            }
            let negative = signed && size <= 8 && b[size - 1] & 0x80 != 0;
            if !ok || negative {
                return Err(Error::format(format!(
                    "sparse {what}: a negative or huge index"
                )));
            }
            Ok(u64::from_le_bytes(b))
        })
        .collect()
}

/// The MATLAB-style listing (or, with `dense`, the dense array) of the sparse matrix at `base`.
pub fn sparse_text(file: &mut File, base: &str, dense: bool) -> Result<String> {
    let format = member(file, base, "format")?;
    let format: String = format
        .as_bytes()
        .iter()
        .take_while(|&&b| b != 0)
        .map(|&b| char::from(b))
        .collect();
    let shape = ints(&member(file, base, "shape")?, "shape")?;
    let [nrows, ncols] = shape[..] else {
        return Err(Error::format("a sparse shape of more than two dimensions"));
    };
    let data = member(file, base, "data")?.to_native().to_order(Order::C);
    let nnz = data.len();
    let (rows, cols) = match format.as_str() {
        "coo" => (
            ints(&member(file, base, "row")?, "rows")?,
            ints(&member(file, base, "col")?, "columns")?,
        ),
        "csc" | "csr" => {
            let indices = ints(&member(file, base, "indices")?, "indices")?;
            let indptr = ints(&member(file, base, "indptr")?, "offsets")?;
            if indptr.first() != Some(&0)
                || indptr.windows(2).any(|w| w[0] > w[1])
                || indptr.last() != Some(&(indices.len() as u64))
            {
                return Err(Error::format(
                    "sparse offsets (indptr) are not increasing to nnz",
                ));
            }
            let mut outer = Vec::with_capacity(indices.len());
            for (i, w) in indptr.windows(2).enumerate() {
                outer.extend(std::iter::repeat_n(i as u64, (w[1] - w[0]) as usize));
            }
            match format.as_str() {
                "csc" => (indices, outer),
                _ => (outer, indices),
            }
        }
        other => return Err(Error::format(format!("unknown sparse format '{other}'"))),
    };
    if rows.len() != nnz || cols.len() != nnz {
        return Err(Error::format(format!(
            "sparse matrix with {nnz} values and {} row / {} column indices",
            rows.len(),
            cols.len()
        )));
    }
    if let Some(k) = (0..nnz).find(|&k| rows[k] >= nrows || cols[k] >= ncols) {
        return Err(Error::format(format!(
            "sparse entry {k} at ({}, {}) outside the {nrows}×{ncols} matrix",
            rows[k], cols[k]
        )));
    }
    let item = data.dtype().itemsize();
    let value = |k: usize| -> Result<NdArray> {
        NdArray::from_bytes(
            data.dtype().clone(),
            &[],
            Order::C,
            &data.as_bytes()[k * item..(k + 1) * item],
        )
    };
    if dense {
        let cells = usize::try_from(nrows.saturating_mul(ncols)).unwrap_or(usize::MAX);
        if cells > MAX_DENSE {
            return Err(Error::invalid_input(format!(
                "a {nrows}×{ncols} sparse matrix is too large to print dense (at most {MAX_DENSE} elements)"
            )));
        }
        let shape = [nrows as usize, ncols as usize];
        let mut out = NdArray::zeroed(data.dtype().clone(), &shape, Order::C)?;
        let bytes = out.as_bytes_mut()?;
        for k in 0..nnz {
            let at = (rows[k] as usize * shape[1] + cols[k] as usize) * item;
            bytes[at..at + item].copy_from_slice(&data.as_bytes()[k * item..(k + 1) * item]);
        }
        return Ok(crate::numfmt::array_str(&out)? + "\n");
    }
    let mut order: Vec<usize> = (0..nnz).collect();
    order.sort_by_key(|&k| (cols[k], rows[k]));
    let mut text = format!("sparse {nrows}×{ncols} ({}), nnz {nnz}\n", data.dtype());
    if nnz == 0 {
        text.push_str("   All zero sparse\n");
    }
    let labels: Vec<String> = order
        .iter()
        .map(|&k| format!("({},{})", rows[k] + 1, cols[k] + 1))
        .collect();
    let width = labels.iter().map(String::len).max().unwrap_or(0);
    for (label, &k) in labels.iter().zip(&order) {
        let v = crate::numfmt::array_str(&value(k)?)?;
        text.push_str(&format!("   {label:<width$}    {v}\n"));
    }
    Ok(text)
}
