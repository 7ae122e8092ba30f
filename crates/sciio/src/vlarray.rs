//! Rows of variable length (PyTables VLArrays, h5py variable-length datasets) as .npz
//! members: one member per row, since a row's length is its own.
//!
//! Naming: the rows of node `NAME` (its path without the leading `/`, e.g. `run/events`)
//! become members `NAME/row_000000`, `NAME/row_000001`, ... — `row_` and the row index in
//! decimal, zero-padded to at least 6 digits (more digits past row 999999), stored as
//! `NAME/row_000000.npy` in the zip and read back by `np.load(f)["NAME/row_000000"]`. Rows
//! are read with [`crate::File::read_rows`].

use sciio_core::NdArray;

/// How a conversion carries a node of variable-length rows.
// Only HDF5 files hold such nodes: without that format the planning code that matches on
// the kinds stays, but nothing constructs them.
#[cfg_attr(not(feature = "hdf5"), allow(dead_code))]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum VlKind {
    /// Strings (`vlstring`, `vlunicode`, h5py's variable-length strings): one `S`/`U` array,
    /// read whole with [`crate::File::read_array`].
    Strings,
    /// Numbers: one array per row ([`crate::File::read_rows`]).
    Rows,
    /// Pickled Python objects: never unpickled, left out.
    Objects,
}

/// The npz member name (without `.npy`) of row `index` of the node named `name` (a leading
/// `/` is dropped): `name/row_000042`.
///
/// ```
/// assert_eq!(sciio::vlarray::row_member_name("/run/vl", 42), "run/vl/row_000042");
/// assert_eq!(sciio::vlarray::row_member_name("vl", 1234567), "vl/row_1234567");
/// ```
pub fn row_member_name(name: &str, index: usize) -> String {
    format!("{}/row_{index:06}", name.trim_start_matches('/'))
}

/// The rows of node `name` as (member name, array) pairs, named by [`row_member_name`], in
/// row order.
pub fn npz_members(name: &str, rows: Vec<NdArray>) -> Vec<(String, NdArray)> {
    rows.into_iter()
        .enumerate()
        .map(|(i, row)| (row_member_name(name, i), row))
        .collect()
}

/// Writes the rows of node `name` into `npz`, one member per row ([`npz_members`] naming).
pub fn write_npz_rows<W: std::io::Write + std::io::Seek>(
    npz: &mut sciio_npy::npz::NpzWriter<W>,
    name: &str,
    rows: Vec<NdArray>,
) -> sciio_core::Result<()> {
    for (member, row) in npz_members(name, rows) {
        npz.add(&member, &row)?;
    }
    Ok(())
}
