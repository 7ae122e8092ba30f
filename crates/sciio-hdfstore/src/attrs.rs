//! The attributes pandas sets on a store's groups and leaves, as plain values: strings and
//! numbers PyTables stores natively, and the pickles (`None`, Python lists...) read with
//! sciio-pickle, never executed.

use sciio_core::{Error, Result};
use sciio_pickle::Value;
use sciio_pytables::sciio_hdf5::{ByteOrder, H5Type, RawData};
use sciio_pytables::{PtAttr, PtAttrValue, PtFile};

/// The attributes of one node, by name.
#[derive(Debug)]
pub(crate) struct Attrs {
    node: String,
    items: Vec<PtAttr>,
}

impl Attrs {
    pub(crate) fn read(file: &PtFile, node: &str) -> Result<Attrs> {
        Ok(Attrs {
            node: node.to_string(),
            items: file.attrs(node)?,
        })
    }

    fn get(&self, name: &str) -> Option<&PtAttr> {
        self.items.iter().find(|a| a.name == name)
    }

    pub(crate) fn has(&self, name: &str) -> bool {
        self.get(name).is_some()
    }

    /// The attribute as a value: strings and numbers decoded, pickles parsed.
    pub(crate) fn value(&self, name: &str) -> Result<Option<Value>> {
        let Some(attr) = self.get(name) else {
            return Ok(None);
        };
        attr_value(attr)
            .map(Some)
            .map_err(|e| e.with_node(format!("{}:{name}", self.node)))
    }

    /// A text attribute (`None` when absent or a pickled `None`).
    pub(crate) fn str(&self, name: &str) -> Result<Option<String>> {
        match self.value(name)? {
            None | Some(Value::None) => Ok(None),
            Some(Value::Str(s)) => Ok(Some(s)),
            Some(Value::Bytes(b)) => Ok(Some(String::from_utf8_lossy(&b).into_owned())),
            Some(other) => Err(self.bad(name, &other, "text")),
        }
    }

    /// An integer attribute.
    pub(crate) fn int(&self, name: &str) -> Result<Option<i64>> {
        match self.value(name)? {
            None | Some(Value::None) => Ok(None),
            Some(Value::Int(i)) => Ok(Some(i)),
            Some(Value::Bool(b)) => Ok(Some(i64::from(b))),
            Some(other) => Err(self.bad(name, &other, "an integer")),
        }
    }

    /// A flag (numpy bool, Python bool or integer).
    pub(crate) fn flag(&self, name: &str) -> Result<bool> {
        Ok(self.int(name)?.is_some_and(|v| v != 0))
    }

    /// A required integer attribute.
    pub(crate) fn required_int(&self, name: &str) -> Result<i64> {
        self.int(name)?.ok_or_else(|| {
            Error::format(format!("attribute {name:?} is missing")).with_node(self.node.clone())
        })
    }

    pub(crate) fn bad(&self, name: &str, value: &Value, wanted: &str) -> Error {
        Error::unsupported(format!(
            "attribute {name:?} is {}, not {wanted}",
            crate::pyobj::describe(value)
        ))
        .with_node(self.node.clone())
    }
}

fn attr_value(attr: &PtAttr) -> Result<Value> {
    match &attr.value {
        PtAttrValue::Pickle(bytes) => sciio_pickle::parse(bytes),
        PtAttrValue::Data(d) => data_value(d),
        PtAttrValue::Vlen(_) => Ok(attr.as_str().map(Value::Str).unwrap_or(Value::None)),
        PtAttrValue::Empty(_) => Ok(Value::None),
        PtAttrValue::Elements(_) => Err(Error::unsupported(
            "attribute of references or variable-length compounds",
        )),
    }
}

fn data_value(d: &RawData) -> Result<Value> {
    let n: usize = d.shape.iter().product();
    if n != 1 {
        if let H5Type::FixedString { .. } = d.ty {
            return Err(Error::unsupported("an array of strings as an attribute"));
        }
        return Err(Error::unsupported(format!(
            "an attribute of {n} values, not a scalar"
        )));
    }
    match &d.ty {
        H5Type::FixedString { .. } => {
            let end = d
                .bytes
                .iter()
                .position(|&b| b == 0)
                .unwrap_or(d.bytes.len());
            Ok(Value::Str(
                String::from_utf8_lossy(&d.bytes[..end]).into_owned(),
            ))
        }
        H5Type::Int { .. } => {
            let attr = PtAttr {
                name: String::new(),
                value: PtAttrValue::Data(d.clone()),
                system: false,
            };
            attr.as_i64()
                .map(Value::Int)
                .ok_or_else(|| Error::unsupported("an integer attribute wider than 64 bits"))
        }
        H5Type::Bitfield { .. } | H5Type::Enum { .. } => {
            Ok(Value::Bool(d.bytes.iter().any(|&b| b != 0)))
        }
        H5Type::Float { size: 8, order, .. } => {
            let mut w = [0u8; 8];
            let Some(b) = d.bytes.get(..8) else {
                return Err(Error::format("a float attribute shorter than 8 bytes"));
            };
            w.copy_from_slice(b);
            Ok(Value::Float(if *order == ByteOrder::Big {
                f64::from_be_bytes(w)
            } else {
                f64::from_le_bytes(w)
            }))
        }
        other => Err(Error::unsupported(format!(
            "an attribute of type {other:?}"
        ))),
    }
}
