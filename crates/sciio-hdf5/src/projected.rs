//! Projected reads of compound datasets ([`Dataset::read_members`]): rows read with a memory
//! compound type that holds only some members, so that libhdf5 converts (copies out of each
//! decoded chunk) only those members' bytes and the result holds only them. What SQL over a
//! wide PyTables table needs when a query names one column of fifty.

use hdf5_sys::h5d::H5Dget_type;
use hdf5_sys::h5t::{H5T_class_t, H5Tcopy, H5Tcreate, H5Tget_member_type, H5Tinsert};
use sciio_core::{Error, Result};

use crate::file::Dataset;
use crate::handle::{c_name, check, locked, Hid};
use crate::types::{Field, H5Type};
use sciio_h5native::{RawData, Slice};

impl Dataset {
    /// Rows `start..start+count` (along the first dimension, all of the others) of a compound
    /// dataset, with only the top-level members named in `members`: they keep the file's
    /// member types (byte order included) and order by offset, packed one after another.
    /// libhdf5 converts only these members' bytes out of the rows it reads. A name the
    /// compound lacks is an error naming it; variable-length members are refused as
    /// [`Dataset::read_slices`] refuses them.
    ///
    /// ```no_run
    /// let file = sciio_hdf5::File::open("table.h5")?;
    /// let ds = file.dataset("/table")?;
    /// let x = ds.read_members(0, 1000, &["x".to_string()])?;
    /// assert_eq!(x.bytes.len(), 1000 * x.ty.size());
    /// # Ok::<(), sciio_core::Error>(())
    /// ```
    pub fn read_members(&self, start: u64, count: u64, members: &[String]) -> Result<RawData> {
        let ty = self.dtype()?;
        let kept = kept_members(&ty, members).map_err(|e| self.locate(e))?;
        if kept.iter().any(|(_, f)| f.ty.has_vlen()) {
            return Err(self.locate(Error::unsupported(
                "a variable-length member: use read_elements",
            )));
        }
        let shape = self.shape()?;
        let rows = shape.first().copied().unwrap_or(0);
        if start.checked_add(count).is_none_or(|end| end > rows) {
            return Err(self.locate(Error::invalid_input(format!(
                "rows {start}..{} outside the {rows} rows",
                start.saturating_add(count)
            ))));
        }
        self.check_filters_available()?;
        let (layout, chunk, _) = self.storage()?;
        self.check_fill_bound(&shape, layout, chunk.as_deref(), ty.size())?;
        let mut slices = vec![Slice {
            start,
            count,
            step: 1,
        }];
        slices.extend(shape[1..].iter().map(|&d| Slice {
            start: 0,
            count: d,
            step: 1,
        }));
        let long_double = crate::types::native_long_double().is_some_and(|t| t.size() == 16);
        locked(|| {
            let (mtype, mty) = self.member_type(&kept, long_double)?;
            let (space, out_shape) = self.select(Some(&slices))?;
            let buf = self.read_selection(&mtype, &space, &out_shape)?;
            Ok(RawData {
                ty: mty,
                shape: out_shape,
                bytes: buf,
            })
        })
        .map_err(|e| self.locate(e))
    }

    /// A memory compound of the `kept` members (member index, field), packed in offset order,
    /// and its type as read back from libhdf5 (caller holds the lock). IEEE quad floats become
    /// the native long double when it has their 16 bytes (`long_double`), as
    /// [`Dataset::read_slices`] reads them.
    fn member_type(&self, kept: &[(usize, &Field)], long_double: bool) -> Result<(Hid, H5Type)> {
        let size: usize = kept.iter().map(|(_, f)| f.ty.size()).sum();
        // SAFETY: valid dataset id; the type copy is owned by `file_type`.
        let file_type = Hid::new(unsafe { H5Dget_type(self.hid()) }, || {
            "cannot read the datatype".into()
        })?;
        // SAFETY: creating a compound of `size` bytes (>= 1: every member has a size).
        let mtype = Hid::new(
            unsafe { H5Tcreate(H5T_class_t::H5T_COMPOUND, size.max(1)) },
            || "cannot create a memory compound type".into(),
        )?;
        let mut offset = 0usize;
        for (index, field) in kept {
            let member = if is_quad(&field.ty) && long_double {
                // SAFETY: a predefined type, copied and owned by the Hid.
                Hid::new(
                    unsafe { H5Tcopy(*hdf5_sys::h5t::H5T_NATIVE_LDOUBLE) },
                    || "cannot copy the long double type".into(),
                )?
            } else {
                let index = u32::try_from(*index)
                    .map_err(|_| Error::format("a compound of too many members"))?;
                // SAFETY: valid compound type id and member index (from its own listing).
                Hid::new(unsafe { H5Tget_member_type(file_type.id(), index) }, || {
                    format!("cannot read the type of member {:?}", field.name)
                })?
            };
            let name = c_name(&field.name)?;
            // SAFETY: valid ids; `offset + member size <= size` as the sizes were summed.
            check(
                unsafe { H5Tinsert(mtype.id(), name.as_ptr(), offset, member.id()) },
                || format!("cannot add member {:?} to the memory type", field.name),
            )?;
            offset += field.ty.size();
        }
        let mty = crate::types::from_id(mtype.id())?;
        Ok((mtype, mty))
    }
}

/// The members of compound `ty` named in `names` with their member index, in offset order.
fn kept_members<'a>(ty: &'a H5Type, names: &[String]) -> Result<Vec<(usize, &'a Field)>> {
    let H5Type::Compound { fields, .. } = ty else {
        return Err(Error::mismatch(
            "a projected read needs a compound dataset (a table)",
        ));
    };
    if let Some(missing) = names.iter().find(|n| !fields.iter().any(|f| &f.name == *n)) {
        return Err(Error::not_found(format!(
            "no member {missing:?} in the compound"
        )));
    }
    let mut kept: Vec<(usize, &Field)> = fields
        .iter()
        .enumerate()
        .filter(|(_, f)| names.contains(&f.name))
        .collect();
    kept.sort_by_key(|(_, f)| f.offset);
    Ok(kept)
}

fn is_quad(ty: &H5Type) -> bool {
    matches!(
        ty,
        H5Type::Float {
            size: 16,
            precision: 128,
            ..
        }
    )
}
