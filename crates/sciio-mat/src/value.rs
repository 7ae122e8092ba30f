//! The MATLAB value model: what a variable of a MAT file holds, independent of the file.
//!
//! Every array-like value keeps MATLAB's dimensions (`[rows, cols, ...]`, at least two) and
//! column-major element order, as MATLAB does. Numeric and logical data are
//! [`NdArray`]s in [`Order::F`] with the MATLAB shape, so [`NdArray::to_order`] with
//! [`Order::C`] gives the row-major array `hdf5storage.loadmat` returns (same shape, numpy
//! order) without any reinterpretation.

use sciio_core::{DType, Error, NdArray, Order, Result, ScalarKind};

/// MATLAB's class of a value, as stored in the `MATLAB_class` attribute.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum MatClass {
    /// `double` (f64, real or complex).
    Double,
    /// `single` (f32, real or complex).
    Single,
    /// `int8`.
    Int8,
    /// `int16`.
    Int16,
    /// `int32`.
    Int32,
    /// `int64`.
    Int64,
    /// `uint8`.
    UInt8,
    /// `uint16`.
    UInt16,
    /// `uint32`.
    UInt32,
    /// `uint64`.
    UInt64,
    /// `logical`.
    Logical,
    /// `char`.
    Char,
    /// `cell`.
    Cell,
    /// `struct`.
    Struct,
    /// `function_handle`.
    FunctionHandle,
    /// Any other class name: MATLAB objects (`string`, `datetime`, `table`, user classes).
    Object(String),
}

impl MatClass {
    /// The class name MATLAB writes.
    pub fn name(&self) -> &str {
        match self {
            MatClass::Double => "double",
            MatClass::Single => "single",
            MatClass::Int8 => "int8",
            MatClass::Int16 => "int16",
            MatClass::Int32 => "int32",
            MatClass::Int64 => "int64",
            MatClass::UInt8 => "uint8",
            MatClass::UInt16 => "uint16",
            MatClass::UInt32 => "uint32",
            MatClass::UInt64 => "uint64",
            MatClass::Logical => "logical",
            MatClass::Char => "char",
            MatClass::Cell => "cell",
            MatClass::Struct => "struct",
            MatClass::FunctionHandle => "function_handle",
            MatClass::Object(name) => name,
        }
    }

    /// Parses a `MATLAB_class` value; unknown names become [`MatClass::Object`].
    pub fn from_name(name: &str) -> MatClass {
        match name {
            "double" => MatClass::Double,
            "single" => MatClass::Single,
            "int8" => MatClass::Int8,
            "int16" => MatClass::Int16,
            "int32" => MatClass::Int32,
            "int64" => MatClass::Int64,
            "uint8" => MatClass::UInt8,
            "uint16" => MatClass::UInt16,
            "uint32" => MatClass::UInt32,
            "uint64" => MatClass::UInt64,
            "logical" => MatClass::Logical,
            "char" => MatClass::Char,
            "cell" => MatClass::Cell,
            "struct" => MatClass::Struct,
            "function_handle" => MatClass::FunctionHandle,
            other => MatClass::Object(other.to_string()),
        }
    }

    /// The numeric class of a numpy scalar kind (complex kinds give their part's class).
    pub fn of_kind(kind: ScalarKind) -> Option<MatClass> {
        Some(match kind {
            ScalarKind::Float(8) | ScalarKind::Complex(16) => MatClass::Double,
            ScalarKind::Float(4) | ScalarKind::Complex(8) => MatClass::Single,
            ScalarKind::Int(1) => MatClass::Int8,
            ScalarKind::Int(2) => MatClass::Int16,
            ScalarKind::Int(4) => MatClass::Int32,
            ScalarKind::Int(8) => MatClass::Int64,
            ScalarKind::UInt(1) => MatClass::UInt8,
            ScalarKind::UInt(2) => MatClass::UInt16,
            ScalarKind::UInt(4) => MatClass::UInt32,
            ScalarKind::UInt(8) => MatClass::UInt64,
            ScalarKind::Bool => MatClass::Logical,
            _ => return None,
        })
    }

    /// The real numpy kind of a numeric class.
    pub fn numeric_kind(&self) -> Option<ScalarKind> {
        Some(match self {
            MatClass::Double => ScalarKind::Float(8),
            MatClass::Single => ScalarKind::Float(4),
            MatClass::Int8 => ScalarKind::Int(1),
            MatClass::Int16 => ScalarKind::Int(2),
            MatClass::Int32 => ScalarKind::Int(4),
            MatClass::Int64 => ScalarKind::Int(8),
            MatClass::UInt8 => ScalarKind::UInt(1),
            MatClass::UInt16 => ScalarKind::UInt(2),
            MatClass::UInt32 => ScalarKind::UInt(4),
            MatClass::UInt64 => ScalarKind::UInt(8),
            _ => return None,
        })
    }
}

/// A MATLAB char array: UTF-16 code units (or code points, for files written as UTF-32) in
/// column-major order.
#[derive(Debug, Clone, Eq)]
pub struct CharArray {
    /// MATLAB dimensions.
    pub shape: Vec<usize>,
    /// Character codes, column-major.
    pub codes: Vec<u32>,
    /// The numpy text array hdf5storage stored as this char array, as its `Python.*`
    /// attributes describe it (v7.3 files it wrote): [`MatValue::to_numpy`] gives that array
    /// back. Not part of the MATLAB value: equality and writing ignore it.
    pub numpy: Option<NumpyText>,
}

/// A numpy `U`/`S` array stored as MATLAB chars the way hdf5storage stores it: each string's
/// `width` code units one after another along the char array's last axis, so the char
/// array's size is `shape[..-1] + (shape[-1] * width,)` (`(1, width)` for a 0-d scalar).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NumpyText {
    /// `S` (bytes) rather than `U` (str).
    pub bytes: bool,
    /// The strings' width in characters (`U<n>`/`S<n>`).
    pub width: usize,
    /// numpy's shape.
    pub shape: Vec<usize>,
}

impl NumpyText {
    /// The numpy array of `codes` (column-major over MATLAB's `dims`): their C order is each
    /// string's units in turn. An `S` unit above 255 is an error.
    fn array(&self, codes: &[u32], dims: &[usize]) -> Result<NdArray> {
        let units: Vec<u8> = codes.iter().flat_map(|c| c.to_le_bytes()).collect();
        let in_c = NdArray::from_bytes(
            DType::scalar(ScalarKind::UInt(4)).with_order(sciio_core::ByteOrder::Little),
            dims,
            Order::F,
            &units,
        )?
        .to_order(Order::C);
        let units = in_c.as_bytes();
        let (kind, bytes) = match self.bytes {
            false => (ScalarKind::Unicode(self.width), units.to_vec()),
            true => {
                let narrow: Option<Vec<u8>> = units
                    .chunks_exact(4)
                    .map(|u| match u {
                        [b, 0, 0, 0] => Some(*b),
                        _ => None,
                    })
                    .collect();
                let narrow = narrow.ok_or_else(|| {
                    Error::format("a numpy bytes array stored with a char above 255")
                })?;
                (ScalarKind::Bytes(self.width), narrow)
            }
        };
        NdArray::from_bytes(
            DType::scalar(kind).with_order(sciio_core::ByteOrder::Little),
            &self.shape,
            Order::C,
            &bytes,
        )
    }
}

impl PartialEq for CharArray {
    fn eq(&self, other: &Self) -> bool {
        self.shape == other.shape && self.codes == other.codes
    }
}

impl CharArray {
    /// A `1×n` char row holding `text` (one code per Unicode scalar value; see
    /// [`crate::WriteOptions`] for how characters beyond the BMP are stored).
    ///
    /// ```
    /// let c = sciio_mat::CharArray::from_str("héllo");
    /// assert_eq!(c.shape, vec![1, 5]);
    /// assert_eq!(c.to_string_lossy(), "héllo");
    /// ```
    #[allow(clippy::should_implement_trait)] // infallible; FromStr's Result would only add noise
    pub fn from_str(text: &str) -> CharArray {
        let codes: Vec<u32> = text.chars().map(u32::from).collect();
        let shape = if codes.is_empty() {
            vec![0, 0]
        } else {
            vec![1, codes.len()]
        };
        CharArray {
            shape,
            codes,
            numpy: None,
        }
    }

    /// Whether `shape` and `codes` agree.
    pub fn check(&self) -> Result<()> {
        check_count(&self.shape, self.codes.len(), "char array")
    }

    /// The text of a char row (or of all characters in column-major order otherwise); codes
    /// that are not characters become U+FFFD. UTF-16 surrogate pairs are joined.
    pub fn to_string_lossy(&self) -> String {
        if self.codes.iter().all(|&c| c <= 0xFFFF) {
            let units: Vec<u16> = self.codes.iter().map(|&c| c as u16).collect();
            return String::from_utf16_lossy(&units);
        }
        self.codes
            .iter()
            .map(|&c| char::from_u32(c).unwrap_or('\u{FFFD}'))
            .collect()
    }

    /// The strings along the last axis of a char array of 3 or more dimensions, as
    /// `scipy.io.loadmat` reads them (`chars_as_strings`): a `U` array of MATLAB's shape
    /// without its last axis, whose length is the strings' width (`U1` at least, as numpy's
    /// and scipy's empty strings).
    fn strings_along_last(&self) -> Result<NdArray> {
        self.check()?;
        let (outer, last) = match self.shape.split_last() {
            Some((&last, outer)) => (outer, last),
            None => (&[][..], 0),
        };
        let m: usize = outer.iter().product();
        // Column-major: string p's characters are codes p, p + m, p + 2m...
        let strings: Vec<String> = (0..m)
            .map(|p| {
                let codes = (0..last).filter_map(|j| self.codes.get(p + j * m).copied());
                CharArray {
                    shape: vec![1, last],
                    codes: codes.collect(),
                    numpy: None,
                }
                .to_string_lossy()
            })
            .collect();
        Ok(unicode_array(&strings, outer, Order::F, 1)?.to_order(Order::C))
    }

    /// The rows of a 2-D char matrix as strings (MATLAB's `cellstr` without trimming).
    pub fn rows(&self) -> Vec<String> {
        let (m, n) = match self.shape.as_slice() {
            [m, rest @ ..] => (*m, rest.iter().product::<usize>()),
            [] => (1, self.codes.len()),
        };
        (0..m)
            .map(|r| {
                let row = CharArray {
                    shape: vec![1, n],
                    codes: (0..n)
                        .filter_map(|c| self.codes.get(r + c * m).copied())
                        .collect(),
                    numpy: None,
                };
                row.to_string_lossy()
            })
            .collect()
    }
}

/// `strings` (in `order` over `shape`) as a little-endian `U` array as wide as the longest
/// (shorter ones NUL-padded, as numpy pads them), and at least `min_width`.
fn unicode_array(
    strings: &[String],
    shape: &[usize],
    order: Order,
    min_width: usize,
) -> Result<NdArray> {
    let width = strings.iter().map(|r| r.chars().count()).max().unwrap_or(0);
    let width = width.max(min_width);
    let dtype = DType::scalar(ScalarKind::Unicode(width));
    let mut bytes = Vec::with_capacity(strings.len() * width * 4);
    for r in strings {
        let mut n = 0;
        for ch in r.chars() {
            bytes.extend_from_slice(&u32::from(ch).to_le_bytes());
            n += 1;
        }
        bytes.resize(bytes.len() + (width - n) * 4, 0);
    }
    NdArray::from_bytes(
        dtype.with_order(sciio_core::ByteOrder::Little),
        shape,
        order,
        &bytes,
    )
}

/// A MATLAB cell array: any values, column-major.
#[derive(Debug, Clone, PartialEq)]
pub struct CellArray {
    /// MATLAB dimensions.
    pub shape: Vec<usize>,
    /// Elements, column-major.
    pub items: Vec<MatValue>,
}

impl CellArray {
    /// A `1×n` cell row (`0×0` when empty).
    pub fn row(items: Vec<MatValue>) -> CellArray {
        let shape = if items.is_empty() {
            vec![0, 0]
        } else {
            vec![1, items.len()]
        };
        CellArray { shape, items }
    }

    /// A cell of `shape` from column-major `items`; errors when the counts differ.
    pub fn new(shape: Vec<usize>, items: Vec<MatValue>) -> Result<CellArray> {
        check_count(&shape, items.len(), "cell array")?;
        Ok(CellArray { shape, items })
    }
}

/// A MATLAB struct array: named fields, one value per field per element.
#[derive(Debug, Clone, PartialEq)]
pub struct StructArray {
    /// MATLAB dimensions (`[1, 1]` for a scalar struct).
    pub shape: Vec<usize>,
    /// Field names in order.
    pub fields: Vec<String>,
    /// `elements[i][j]`: field `j` of element `i` (column-major element order).
    pub elements: Vec<Vec<MatValue>>,
}

impl StructArray {
    /// A scalar (`1×1`) struct.
    ///
    /// ```
    /// use sciio_mat::{MatValue, StructArray};
    /// let s = StructArray::scalar(vec![("a".into(), MatValue::from(1.5))]);
    /// assert_eq!(s.field(0, "a"), Some(&MatValue::from(1.5)));
    /// ```
    pub fn scalar(fields: Vec<(String, MatValue)>) -> StructArray {
        let (names, values): (Vec<String>, Vec<MatValue>) = fields.into_iter().unzip();
        StructArray {
            shape: vec![1, 1],
            fields: names,
            elements: vec![values],
        }
    }

    /// A struct array of `shape` with `fields`; every element must have one value per field.
    pub fn new(
        shape: Vec<usize>,
        fields: Vec<String>,
        elements: Vec<Vec<MatValue>>,
    ) -> Result<StructArray> {
        check_count(&shape, elements.len(), "struct array")?;
        if let Some(bad) = elements.iter().position(|e| e.len() != fields.len()) {
            return Err(Error::invalid_input(format!(
                "struct element {bad} has {} values for {} fields",
                elements[bad].len(),
                fields.len()
            )));
        }
        Ok(StructArray {
            shape,
            fields,
            elements,
        })
    }

    /// Field `name` of element `index`.
    pub fn field(&self, index: usize, name: &str) -> Option<&MatValue> {
        let j = self.fields.iter().position(|f| f == name)?;
        self.elements.get(index)?.get(j)
    }
}

/// What a sparse matrix holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SparseKind {
    /// Real doubles.
    Double,
    /// Complex doubles.
    Complex,
    /// Logicals.
    Logical,
}

/// A MATLAB sparse matrix in compressed sparse column form (as MATLAB stores it).
#[derive(Debug, Clone)]
pub struct SparseMatrix {
    /// Number of rows.
    pub nrows: usize,
    /// Number of columns (`jc.len() - 1`).
    pub ncols: usize,
    /// Row index of each stored value.
    pub ir: Vec<u64>,
    /// Column start offsets into `ir`/`data` (`ncols + 1` entries).
    pub jc: Vec<u64>,
    /// The stored values: 1-D `f8`, `c16` or `b1` array of `ir.len()` elements.
    pub data: NdArray,
}

impl SparseMatrix {
    /// What the values are.
    pub fn kind(&self) -> SparseKind {
        match self.data.dtype().as_scalar().map(|s| s.kind) {
            Some(ScalarKind::Complex(_)) => SparseKind::Complex,
            Some(ScalarKind::Bool) => SparseKind::Logical,
            _ => SparseKind::Double,
        }
    }

    /// Checks the CSC structure: sizes, monotone `jc`, row indices in range.
    pub fn check(&self) -> Result<()> {
        let nnz = self.ir.len();
        if self.jc.len() != self.ncols.saturating_add(1) || self.data.len() != nnz {
            return Err(Error::format(format!(
                "sparse matrix with {} columns has {} column offsets, {} row indices and {} values",
                self.ncols,
                self.jc.len(),
                nnz,
                self.data.len()
            )));
        }
        if self.jc.first().is_some_and(|&j| j != 0)
            || self.jc.windows(2).any(|w| w[0] > w[1])
            || self.jc.last().is_some_and(|&j| j != nnz as u64)
        {
            return Err(Error::format(
                "sparse column offsets (jc) are not increasing from 0 to nnz",
            ));
        }
        if self.ir.iter().any(|&r| r >= self.nrows as u64) {
            return Err(Error::format(format!(
                "sparse row index (ir) outside {} rows",
                self.nrows
            )));
        }
        Ok(())
    }

    /// A MATLAB sparse matrix from coordinates (0-based `rows[k]`, `cols[k]` holding
    /// `data[k]`), as `scipy.sparse.coo_matrix(...).tocsc()` builds it: entries sorted by
    /// column then row, duplicates summed (logical: or-ed). `data` must be `f8`, `c16` or
    /// `b1` (1-D, one value per coordinate); every coordinate is checked against the shape.
    pub fn from_triplets(
        nrows: usize,
        ncols: usize,
        rows: &[u64],
        cols: &[u64],
        data: &NdArray,
    ) -> Result<SparseMatrix> {
        let kind = data.dtype().as_scalar().map(|s| s.kind);
        let item = match kind {
            Some(ScalarKind::Float(8)) => 8,
            Some(ScalarKind::Complex(16)) => 16,
            Some(ScalarKind::Bool) => 1,
            _ => {
                return Err(Error::unsupported(format!(
                    "sparse values of dtype {}; MATLAB sparse matrices hold double, complex \
                     double or logical values",
                    data.dtype()
                )))
            }
        };
        let nnz = rows.len();
        if cols.len() != nnz || data.len() != nnz {
            return Err(Error::format(format!(
                "sparse coordinates: {} rows, {} columns and {} values",
                nnz,
                cols.len(),
                data.len()
            )));
        }
        if let Some(k) = (0..nnz).find(|&k| rows[k] >= nrows as u64 || cols[k] >= ncols as u64) {
            return Err(Error::format(format!(
                "sparse entry {k} at ({}, {}) outside the {nrows}×{ncols} matrix",
                rows[k], cols[k]
            )));
        }
        let data = data.to_native().to_order(Order::C);
        let bytes = data.as_bytes();
        let mut order: Vec<usize> = (0..nnz).collect();
        order.sort_by_key(|&k| (cols[k], rows[k]));
        let mut ir: Vec<u64> = Vec::with_capacity(nnz);
        let mut col_of: Vec<u64> = Vec::with_capacity(nnz);
        let mut out: Vec<u8> = Vec::with_capacity(nnz * item);
        for k in order {
            let value = &bytes[k * item..(k + 1) * item];
            let dup = ir.last() == Some(&rows[k]) && col_of.last() == Some(&cols[k]);
            if !dup {
                ir.push(rows[k]);
                col_of.push(cols[k]);
                out.extend_from_slice(value);
                continue;
            }
            let at = out.len() - item;
            let last = &mut out[at..];
            match item {
                1 => last[0] |= value[0],
                _ => {
                    for part in 0..item / 8 {
                        let r = part * 8..part * 8 + 8;
                        let mut a = [0u8; 8];
                        let mut b = [0u8; 8];
                        a.copy_from_slice(&last[r.clone()]);
                        b.copy_from_slice(&value[r.clone()]);
                        let sum = f64::from_ne_bytes(a) + f64::from_ne_bytes(b);
                        last[r].copy_from_slice(&sum.to_ne_bytes());
                    }
                }
            }
        }
        let offsets = (ncols as u64).saturating_add(1);
        sciio_core::Limits::default().check_alloc(
            offsets.saturating_mul(8),
            "sparse column offsets (one per column)",
        )?;
        let mut jc = vec![0u64; ncols + 1];
        for &c in &col_of {
            jc[c as usize + 1] += 1;
        }
        for c in 0..ncols {
            jc[c + 1] += jc[c];
        }
        let n = ir.len();
        let m = SparseMatrix {
            nrows,
            ncols,
            ir,
            jc,
            data: NdArray::from_byte_vec(data.dtype().clone(), &[n], Order::C, out)?,
        };
        m.check()?;
        Ok(m)
    }

    /// The column index of every stored value (CSC's `jc` expanded), for a checked matrix.
    pub fn col_indices(&self) -> Vec<u64> {
        let mut cols = Vec::with_capacity(self.ir.len());
        for (c, w) in self.jc.windows(2).enumerate() {
            cols.extend(std::iter::repeat_n(
                c as u64,
                w[1].saturating_sub(w[0]) as usize,
            ));
        }
        cols
    }

    /// The dense matrix (`nrows × ncols`, column-major), for small matrices.
    pub fn to_dense(&self) -> Result<NdArray> {
        self.check()?;
        let item = self.data.dtype().itemsize();
        let mut out = NdArray::zeroed(
            self.data.dtype().clone(),
            &[self.nrows, self.ncols],
            Order::F,
        )?;
        let src = self.data.as_bytes();
        let dst = out.as_bytes_mut()?;
        for col in 0..self.ncols {
            for k in self.jc[col] as usize..self.jc[col + 1] as usize {
                let at = (col * self.nrows + self.ir[k] as usize) * item;
                dst[at..at + item].copy_from_slice(&src[k * item..(k + 1) * item]);
            }
        }
        Ok(out)
    }
}

/// One object's properties, by name, in the order MATLAB lists them (class defaults first,
/// then the saved values, which replace defaults of the same name).
pub type Properties = Vec<(String, MatValue)>;

/// A MATLAB object array (a scalar object is `1×1`).
///
/// ```
/// use sciio_mat::{MatObject, ObjectData};
/// let s = MatObject::string(vec![1, 2], vec![Some("a".into()), None]);
/// assert_eq!(s.class, "string");
/// assert_eq!(s.shape, vec![1, 2]);
/// // numpy has no missing string: `<missing>` becomes "" in the `U` array.
/// let u = s.to_numpy()?;
/// assert_eq!(u.dtype().to_string(), "<U1");
/// # Ok::<(), sciio_core::Error>(())
/// ```
#[derive(Debug, Clone, PartialEq)]
pub struct MatObject {
    /// The class name with its namespace (`string`, `datetime`, `pkg.MyClass`).
    pub class: String,
    /// MATLAB's `size()` of the value: for `string`/`datetime`/`duration`/`categorical`
    /// the size of the data they hold, for other classes the size of the object array.
    pub shape: Vec<usize>,
    /// What the object holds.
    pub data: ObjectData,
}

/// The decoded content of a [`MatObject`]; element vectors are in MATLAB's column-major order
/// and hold `shape.iter().product()` elements.
#[derive(Debug, Clone, PartialEq)]
pub enum ObjectData {
    /// A `string` array; `None` is MATLAB's `<missing>`.
    String(Vec<Option<String>>),
    /// A `datetime` array.
    Datetime(Datetime),
    /// A `duration` array.
    Duration(Duration),
    /// A `categorical` array.
    Categorical(Categorical),
    /// A `table` (its shape is `[rows, variables]`).
    Table(Table),
    /// A `containers.Map`.
    Map(MapData),
    /// An enumeration array (the members by name).
    Enumeration(Enumeration),
    /// A `calendarDuration` array.
    CalendarDuration(CalendarDuration),
    /// MATLAB's `missing` (every element missing).
    Missing,
    /// A MATLAB `dictionary` (R2022b+).
    Dictionary(Dictionary),
    /// Any other class: each element's properties (an element MATLAB saved as a deleted handle
    /// has none).
    Properties(Vec<Properties>),
}

/// A MATLAB `containers.Map`: keys and values in MATLAB's (sorted) key order.
#[derive(Debug, Clone, PartialEq)]
pub struct MapData {
    /// The keys, a `1×n` cell (char rows or numeric scalars; `0×0` when empty).
    pub keys: Box<MatValue>,
    /// The values, a `1×n` cell of any values (`0×0` when empty).
    pub values: Box<MatValue>,
    /// `KeyType` (`char`, `double`, `int32`...).
    pub key_type: String,
    /// `ValueType` (`any`, `char`, `double`...).
    pub value_type: String,
}

/// A MATLAB `dictionary` (R2022b+): its keys and its values, each one array as MATLAB
/// stores them (an `n×1` column of any class, objects such as `string` included), entry `i`
/// being key `i` and value `i`. An unconfigured dictionary (`dictionary` with no types yet)
/// has neither.
#[derive(Debug, Clone, PartialEq)]
pub struct Dictionary {
    /// The keys (`None` when unconfigured).
    pub keys: Option<Box<MatValue>>,
    /// The values (`None` when unconfigured).
    pub values: Option<Box<MatValue>>,
}

/// A MATLAB enumeration array.
#[derive(Debug, Clone, PartialEq)]
pub struct Enumeration {
    /// Each element's member name, column-major.
    pub members: Vec<String>,
    /// The built-in class the enumeration derives from (`uint32`...), `""` when none.
    pub builtin_class: String,
}

/// A MATLAB `calendarDuration` array: each element is `months` calendar months plus `days`
/// calendar days plus `millis` milliseconds (MATLAB stores scalars for components that are the
/// same for every element; they are spread to the array's shape here).
#[derive(Debug, Clone, PartialEq)]
pub struct CalendarDuration {
    /// Months, a `double` array of the object's shape.
    pub months: Box<MatValue>,
    /// Days, a `double` array of the object's shape.
    pub days: Box<MatValue>,
    /// Milliseconds, a `double` array of the object's shape.
    pub millis: Box<MatValue>,
    /// The display `Format` (`""` for MATLAB's default).
    pub format: String,
}

/// A MATLAB `datetime` array.
#[derive(Debug, Clone, PartialEq)]
pub struct Datetime {
    /// Milliseconds since 1970-01-01 00:00, `NaN` for `NaT`: UTC instants when `time_zone` is
    /// set, wall-clock times otherwise (MATLAB's "unzoned" datetimes). MATLAB's sub-millisecond
    /// refinement (the imaginary part it stores) is added in.
    pub millis: Vec<f64>,
    /// The `TimeZone` property (`""` when unzoned).
    pub time_zone: String,
    /// The display `Format` (`""` for MATLAB's default).
    pub format: String,
}

/// A MATLAB `duration` array.
#[derive(Debug, Clone, PartialEq)]
pub struct Duration {
    /// Lengths in milliseconds (`NaN` allowed).
    pub millis: Vec<f64>,
    /// The display `Format` (`hh:mm:ss`, `s`, `d`...).
    pub format: String,
}

/// A MATLAB `table`: named columns of any MATLAB value, each with one row per table row.
#[derive(Debug, Clone, PartialEq)]
pub struct Table {
    /// The variable (column) names.
    pub variable_names: Vec<String>,
    /// One value per variable (a column vector, a matrix with several columns, a cell...).
    pub columns: Vec<MatValue>,
    /// The `RowNames` (empty when the table has none).
    pub row_names: Vec<String>,
    /// A `timetable`'s row times (a `datetime` or `duration` column, one per row) and their
    /// name (`Time` unless renamed); `None` for a `table`.
    pub row_times: Option<(String, Box<MatValue>)>,
}

/// A MATLAB `categorical` array.
#[derive(Debug, Clone, PartialEq)]
pub struct Categorical {
    /// 1-based index into `categories` per element; 0 is `<undefined>`.
    pub codes: Vec<u32>,
    /// The categories, in their order (including categories no element uses).
    pub categories: Vec<String>,
    /// Ordinal categorical?
    pub ordered: bool,
    /// Protected (no new categories by assignment)?
    pub protected: bool,
}

/// A MATLAB object or function handle, kept with its class name. Objects whose layout sciio
/// does not decode keep their stored payload (the `uint32` object reference MATLAB writes, or
/// the struct of a function handle) so nothing is lost.
#[derive(Debug, Clone, PartialEq)]
pub struct Opaque {
    /// The MATLAB class name (`function_handle`, `string`, `datetime`, `table`, `MyClass`...).
    pub class: String,
    /// The value as stored, decoded as plain MATLAB data where possible.
    pub payload: Option<Box<MatValue>>,
    /// Why it is not decoded further.
    pub note: String,
}

/// What [`MatValue::map_contents`] made of a value.
pub(crate) enum Contents {
    /// A cell or struct array, its contents mapped.
    Mapped(MatValue),
    /// Any other value, as it was.
    NotContainer(MatValue),
}

impl Contents {
    /// The value, mapped or not.
    pub(crate) fn value(self) -> MatValue {
        match self {
            Contents::Mapped(v) | Contents::NotContainer(v) => v,
        }
    }
}

/// One MATLAB value.
///
/// ```
/// use sciio_mat::{MatValue, MatClass};
/// let v = MatValue::from(vec![1.0f64, 2.0, 3.0]);
/// assert_eq!(v.class(), MatClass::Double);
/// assert_eq!(v.matlab_shape(), vec![1, 3]);
/// ```
#[derive(Debug, Clone)]
pub enum MatValue {
    /// A numeric array (double, single, int8..uint64; complex as numpy `c8`/`c16`),
    /// MATLAB shape, [`Order::F`].
    Numeric(NdArray),
    /// A logical array (`b1`), MATLAB shape, [`Order::F`].
    Logical(NdArray),
    /// Text.
    Char(CharArray),
    /// A cell array.
    Cell(CellArray),
    /// A struct or struct array.
    Struct(StructArray),
    /// A sparse matrix.
    Sparse(SparseMatrix),
    /// A function handle, or an object sciio cannot decode (with the reason).
    Opaque(Opaque),
    /// A MATLAB object (MCOS class) read from a file: `string`, `datetime`, `duration`,
    /// `categorical` decoded, other classes by their properties.
    Object(MatObject),
}

impl MatValue {
    /// A cell or struct array with `f` applied to each of its cells or field values (the
    /// walks that resolve or mark objects inside containers); any other value given back
    /// unchanged, for the caller.
    pub(crate) fn map_contents(self, mut f: impl FnMut(MatValue) -> MatValue) -> Contents {
        Contents::Mapped(match self {
            MatValue::Cell(CellArray { shape, items }) => MatValue::Cell(CellArray {
                shape,
                items: items.into_iter().map(f).collect(),
            }),
            MatValue::Struct(StructArray {
                shape,
                fields,
                elements,
            }) => MatValue::Struct(StructArray {
                shape,
                fields,
                elements: elements
                    .into_iter()
                    .map(|e| e.into_iter().map(&mut f).collect())
                    .collect(),
            }),
            other => return Contents::NotContainer(other),
        })
    }

    /// MATLAB's class of the value.
    pub fn class(&self) -> MatClass {
        match self {
            MatValue::Numeric(a) => a
                .dtype()
                .as_scalar()
                .and_then(|s| MatClass::of_kind(s.kind))
                .unwrap_or(MatClass::Double),
            MatValue::Logical(_) => MatClass::Logical,
            MatValue::Char(_) => MatClass::Char,
            MatValue::Cell(_) => MatClass::Cell,
            MatValue::Struct(_) => MatClass::Struct,
            MatValue::Sparse(s) => match s.kind() {
                SparseKind::Logical => MatClass::Logical,
                _ => MatClass::Double,
            },
            MatValue::Opaque(o) if o.class == "function_handle" => MatClass::FunctionHandle,
            MatValue::Opaque(o) => MatClass::Object(o.class.clone()),
            MatValue::Object(o) => MatClass::Object(o.class.clone()),
        }
    }

    /// MATLAB's `size()` of the value (at least two dimensions).
    pub fn matlab_shape(&self) -> Vec<usize> {
        let shape = match self {
            MatValue::Numeric(a) | MatValue::Logical(a) => a.shape().to_vec(),
            MatValue::Char(c) => c.shape.clone(),
            MatValue::Cell(c) => c.shape.clone(),
            MatValue::Struct(s) => s.shape.clone(),
            MatValue::Sparse(s) => vec![s.nrows, s.ncols],
            MatValue::Opaque(_) => vec![1, 1],
            MatValue::Object(o) => o.shape.clone(),
        };
        at_least_2d(&shape)
    }

    /// The dimensions in numpy's (row-major) convention as `hdf5storage.loadmat` returns them:
    /// the same numbers as [`MatValue::matlab_shape`] (only the element order differs).
    pub fn numpy_shape(&self) -> Vec<usize> {
        self.matlab_shape()
    }

    /// Whether the value has no elements.
    pub fn is_empty(&self) -> bool {
        self.matlab_shape().contains(&0)
    }

    /// Whether the value is complex.
    pub fn is_complex(&self) -> bool {
        match self {
            MatValue::Numeric(a) => matches!(
                a.dtype().as_scalar().map(|s| s.kind),
                Some(ScalarKind::Complex(_))
            ),
            MatValue::Sparse(s) => s.kind() == SparseKind::Complex,
            _ => false,
        }
    }

    /// A numeric array from any numpy-dtype array (its shape is taken as MATLAB's).
    pub fn numeric(array: NdArray) -> Result<MatValue> {
        let kind = array.dtype().as_scalar().map(|s| s.kind);
        match kind {
            Some(ScalarKind::Bool) => Ok(MatValue::Logical(array)),
            Some(k) if MatClass::of_kind(k).is_some() => Ok(MatValue::Numeric(array)),
            _ => Err(Error::unsupported(format!(
                "dtype {} has no MATLAB class",
                array.dtype()
            ))),
        }
    }

    /// The array numpy would hold for this value, as `hdf5storage.loadmat` returns it (numeric
    /// and logical: same shape, row-major; char: a `U` scalar for a row, a `U` column of rows
    /// for a matrix; decoded objects: see [`MatObject::to_numpy`]). Cells, structs, sparse
    /// matrices, function handles and other objects have no single array.
    pub fn to_numpy(&self) -> Result<NdArray> {
        match self {
            MatValue::Numeric(a) | MatValue::Logical(a) => {
                // One copy (the reorder), not two, for arrays already in native byte order.
                let c = a.to_order(Order::C);
                Ok(match c.dtype().is_native() {
                    true => c,
                    false => c.to_native(),
                })
            }
            MatValue::Char(CharArray {
                numpy: Some(text),
                codes,
                shape,
            }) => text.array(codes, shape),
            MatValue::Char(c) if c.shape.len() > 2 => c.strings_along_last(),
            MatValue::Char(c) => {
                let rows = if c.shape.len() == 2 && c.shape[0] <= 1 {
                    vec![c.to_string_lossy()]
                } else {
                    c.rows()
                };
                let shape: Vec<usize> = if rows.len() == 1 {
                    vec![]
                } else {
                    vec![rows.len()]
                };
                unicode_array(&rows, &shape, Order::C, 0)
            }
            MatValue::Object(o) => o.to_numpy(),
            other => Err(Error::unsupported(format!(
                "a MATLAB {} has no single numpy array",
                other.class().name()
            ))),
        }
    }
}

/// Same dtype, shape and elements (bitwise, in logical order), whatever the memory order.
fn same_array(a: &NdArray, b: &NdArray) -> bool {
    a.dtype().to_native() == b.dtype().to_native()
        && a.shape() == b.shape()
        && a.to_native().to_order(Order::F).as_bytes()
            == b.to_native().to_order(Order::F).as_bytes()
}

impl PartialEq for SparseMatrix {
    fn eq(&self, other: &Self) -> bool {
        self.nrows == other.nrows
            && self.ncols == other.ncols
            && self.ir == other.ir
            && self.jc == other.jc
            && same_array(&self.data, &other.data)
    }
}

impl PartialEq for MatValue {
    fn eq(&self, other: &Self) -> bool {
        match (self, other) {
            (MatValue::Numeric(a), MatValue::Numeric(b))
            | (MatValue::Logical(a), MatValue::Logical(b)) => same_array(a, b),
            (MatValue::Char(a), MatValue::Char(b)) => a == b,
            (MatValue::Cell(a), MatValue::Cell(b)) => a == b,
            (MatValue::Struct(a), MatValue::Struct(b)) => a == b,
            (MatValue::Sparse(a), MatValue::Sparse(b)) => a == b,
            (MatValue::Opaque(a), MatValue::Opaque(b)) => a == b,
            (MatValue::Object(a), MatValue::Object(b)) => a == b,
            _ => false,
        }
    }
}

impl From<f64> for MatValue {
    #[allow(
        clippy::expect_used,
        reason = "the shape holds exactly the elements given"
    )]
    fn from(x: f64) -> Self {
        MatValue::Numeric(NdArray::from_vec(vec![x], &[1, 1]).expect("1x1")) // ok: one element for a 1×1 shape
    }
}

impl From<Vec<f64>> for MatValue {
    /// A `1×n` row vector.
    #[allow(
        clippy::expect_used,
        reason = "the shape holds exactly the elements given"
    )]
    fn from(v: Vec<f64>) -> Self {
        let n = v.len();
        let row = NdArray::from_vec(v, &[1, n]).expect("1xn"); // ok: n elements for a 1×n shape
        MatValue::Numeric(row.to_order(Order::F))
    }
}

impl From<&str> for MatValue {
    fn from(s: &str) -> Self {
        MatValue::Char(CharArray::from_str(s))
    }
}

impl From<bool> for MatValue {
    #[allow(
        clippy::expect_used,
        reason = "the shape holds exactly the elements given"
    )]
    fn from(b: bool) -> Self {
        MatValue::Logical(NdArray::from_vec(vec![b], &[1, 1]).expect("1x1")) // ok: one element for a 1×1 shape
    }
}

/// `shape` padded with trailing ones to two dimensions (MATLAB's minimum).
pub fn at_least_2d(shape: &[usize]) -> Vec<usize> {
    match shape.len() {
        0 => vec![1, 1],
        1 => vec![1, shape[0]],
        _ => shape.to_vec(),
    }
}

fn check_count(shape: &[usize], n: usize, what: &str) -> Result<()> {
    let want = shape.iter().try_fold(1usize, |a, &d| a.checked_mul(d));
    if want != Some(n) {
        return Err(Error::invalid_input(format!(
            "{what} of shape {shape:?} given {n} elements"
        )));
    }
    Ok(())
}

/// A variable's summary, from its attributes only (no data read): what a MAT file lists.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct VarInfo {
    /// The variable name.
    pub name: String,
    /// Its MATLAB class.
    pub class: MatClass,
    /// MATLAB's `size()`.
    pub shape: Vec<usize>,
    /// Complex?
    pub complex: bool,
    /// Sparse?
    pub sparse: bool,
}

impl VarInfo {
    /// Whether it is MATLAB's complex int8 .. uint64 (not sparse), which sciio reads as
    /// complex doubles: numpy has no complex integers.
    pub fn is_complex_integer(&self) -> bool {
        let integer = matches!(
            self.class.numeric_kind(),
            Some(ScalarKind::Int(_) | ScalarKind::UInt(_))
        );
        integer && self.complex && !self.sparse
    }
}

/// A value sciio keeps but cannot decode: its class, the stored payload and why.
pub(crate) fn opaque(class: &str, payload: MatValue, note: String) -> MatValue {
    MatValue::Opaque(Opaque {
        class: class.to_string(),
        payload: Some(Box::new(payload)),
        note,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn matlab_and_numpy_orders() {
        // MATLAB [1 3 5; 2 4 6] is stored column-major as 1..6.
        let f = NdArray::from_bytes(
            DType::scalar(ScalarKind::Float(8)),
            &[2, 3],
            Order::F,
            &(1..=6)
                .flat_map(|x| f64::from(x).to_ne_bytes())
                .collect::<Vec<u8>>(),
        )
        .unwrap();
        let v = MatValue::numeric(f).unwrap();
        assert_eq!(v.matlab_shape(), vec![2, 3]);
        let c = v.to_numpy().unwrap();
        assert_eq!(c.order(), Order::C);
        assert_eq!(c.shape(), &[2, 3]);
        let row_major: Vec<f64> = c
            .as_bytes()
            .chunks(8)
            .map(|b| f64::from_ne_bytes(b.try_into().unwrap()))
            .collect();
        assert_eq!(row_major, vec![1.0, 3.0, 5.0, 2.0, 4.0, 6.0]);
    }

    #[test]
    fn char_rows_and_text() {
        let c = CharArray {
            shape: vec![2, 3],
            codes: "adbecf".chars().map(u32::from).collect(),
            numpy: None,
        };
        assert_eq!(c.rows(), vec!["abc", "def"]);
        let n = MatValue::Char(c).to_numpy().unwrap();
        assert_eq!(n.shape(), &[2]);
        // 2x2x3: strings along the last axis, a 2x2 array (scipy.io's chars_as_strings).
        let words = ["ab ", "c  ", "d  ", "ef "];
        let mut codes = vec![0u32; 12];
        for (at, w) in [(0, 0), (0, 1), (1, 0), (1, 1)].iter().zip(words) {
            for (k, ch) in w.chars().enumerate() {
                codes[at.0 + 2 * at.1 + 4 * k] = u32::from(ch);
            }
        }
        let shape = vec![2, 2, 3];
        let n = MatValue::Char(CharArray {
            shape,
            codes,
            numpy: None,
        })
        .to_numpy()
        .unwrap();
        assert_eq!(n.shape(), &[2, 2]);
        let got: Vec<u32> = n.as_bytes().chunks(4).map(|b| b[0] as u32).collect();
        let want: Vec<u32> = words.concat().chars().map(u32::from).collect();
        assert_eq!(got, want);
        assert_eq!(CharArray::from_str("a😀").to_string_lossy(), "a😀");
    }

    #[test]
    fn sparse_checks_and_dense() {
        let s = SparseMatrix {
            nrows: 2,
            ncols: 2,
            ir: vec![1, 0],
            jc: vec![0, 1, 2],
            data: NdArray::from_vec(vec![5.0f64, 7.0], &[2]).unwrap(),
        };
        let d = s.to_dense().unwrap();
        let vals: Vec<f64> = d
            .as_bytes()
            .chunks(8)
            .map(|b| f64::from_ne_bytes(b.try_into().unwrap()))
            .collect();
        assert_eq!(vals, vec![0.0, 5.0, 7.0, 0.0]);
        let mut bad = s.clone();
        bad.jc = vec![0, 2, 1];
        assert!(bad.check().is_err());
    }
}
