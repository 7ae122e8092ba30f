//! A numeric or logical array given piece by piece ([`ArrayPieces`]), to the writers of
//! both MAT formats (`write/pieces.rs`, `v5/write.rs`).

use sciio_core::{Error, NdArray, Order, Result, ScalarKind};

/// Fills `buf` with the elements from `first` on in MATLAB's order (column-major), in native
/// byte order, `buf.len()` being a whole number of elements.
pub type FillElements<'a> = dyn FnMut(u64, &mut [u8]) -> Result<()> + 'a;

/// A numeric or logical array given piece by piece to [`crate::MatWriter::write_pieces`].
pub struct ArrayPieces<'a> {
    /// The numpy kind of its elements (bool, integers, floats, complex).
    pub kind: ScalarKind,
    /// Its shape (numpy's, which is MATLAB's; made at least 2-d as for whole arrays).
    pub shape: Vec<usize>,
    /// Gives the elements.
    pub fill: &'a mut FillElements<'a>,
}

impl std::fmt::Debug for ArrayPieces<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ArrayPieces")
            .field("kind", &self.kind)
            .field("shape", &self.shape)
            .finish()
    }
}

impl ArrayPieces<'_> {
    /// Elements and bytes of the whole array (`None` when they overflow).
    pub(crate) fn size(&self) -> Option<(u64, u64)> {
        let n = self
            .shape
            .iter()
            .try_fold(1u64, |a, &d| a.checked_mul(d as u64))?;
        Some((n, n.checked_mul(self.kind.itemsize() as u64)?))
    }

    /// The whole array, filled at once: for the writers that take whole values (small
    /// variables, big-endian machines, libhdf5).
    pub(crate) fn gather(&mut self) -> Result<NdArray> {
        let (_, bytes) = self
            .size()
            .ok_or_else(|| Error::invalid_input("the array's size overflows"))?;
        let mut buf = vec![0u8; usize::try_from(bytes).map_err(|_| too_large())?];
        (self.fill)(0, &mut buf)?;
        NdArray::from_bytes(
            sciio_core::DType::scalar(self.kind),
            &self.shape,
            Order::F,
            &buf,
        )
    }
}

fn too_large() -> Error {
    Error::unsupported("an array larger than this machine's address space")
}
