//! Data that cannot be handed out as flat bytes, decoded element by element: compounds and
//! arrays with variable-length members (vlen strings, vlen sequences), and object or region
//! references dereferenced to paths — h5py's view, where these members are Python objects.
//! `sciio-hdf5` reads them (`Dataset::read_elements`).

use crate::types::H5Type;

/// One decoded element (or member of one) of data whose type holds variable-length members or
/// references. Which variant appears where follows the type: see [`ElementData`].
#[derive(Debug, Clone, PartialEq)]
pub enum Element {
    /// A fixed-layout value (number, fixed string, enum, compound or array without vlen or
    /// reference members...): its bytes in the file's layout, as [`crate::RawData`] holds them.
    Fixed(Vec<u8>),
    /// A variable-length string's bytes (no terminating NUL).
    String(Vec<u8>),
    /// A variable-length sequence of fixed-layout elements: their bytes, back to back.
    Values(Vec<u8>),
    /// A variable-length sequence whose elements themselves need decoding.
    Sequence(Vec<Element>),
    /// A compound's members, in the type's member order.
    Compound(Vec<Element>),
    /// An array type's elements, C order.
    Array(Vec<Element>),
    /// A dereferenced object or region reference.
    Reference(RefTarget),
}
/// Where a reference points.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum RefTarget {
    /// A null (never set) reference.
    Null,
    /// An object (group, dataset, committed datatype), by its path in the file.
    Object(String),
    /// A selection inside a dataset.
    Region {
        /// The dataset's path in the file.
        path: String,
        /// What is selected.
        selection: Selection,
    },
}
/// The selection a region reference stores.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Selection {
    /// The whole dataset.
    All,
    /// Nothing.
    None,
    /// Hyperslab blocks as (first corner, last corner) pairs, both inclusive.
    Blocks(Vec<(Vec<u64>, Vec<u64>)>),
    /// Individual points (one coordinate per dimension).
    Points(Vec<Vec<u64>>),
}
/// Decoded data: `elements` holds `shape.product()` elements of `ty` in C order, each shaped
/// like `ty`: [`Element::Compound`] for compounds and [`Element::Array`] for arrays that hold
/// vlen or reference members, [`Element::String`] for vlen strings, [`Element::Values`] /
/// [`Element::Sequence`] for vlen sequences, [`Element::Reference`] for references, and
/// [`Element::Fixed`] for everything else.
#[derive(Debug, Clone, PartialEq)]
pub struct ElementData {
    /// Element type, in the memory layout libhdf5 reads it into (vlen members are descriptors).
    pub ty: H5Type,
    /// Shape (empty for scalars).
    pub shape: Vec<usize>,
    /// One entry per element, C order.
    pub elements: Vec<Element>,
}
